// The one typed configuration module: embedded defaults, derived addresses, bad values refused.
import { describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { loadConfig } from '../../src/config.ts';

describe('configuration', () => {
  test('embedded defaults: port 8080, ./data, PGlite, local assets under PUBLIC_URL/assets', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.publicUrl).toBe('http://localhost:8080');
    expect(config.assetsUrl).toBe('http://localhost:8080/assets');
    expect(config.dataDir).toBe(resolve('./data'));
    expect(config.databaseUrl).toBeUndefined();
    expect(config.s3).toBeUndefined();
  });

  test('ASSETS_URL follows PUBLIC_URL unless set; trailing slashes are dropped', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://api.example.com/' }).assetsUrl).toBe('https://api.example.com/assets');
    expect(loadConfig({ PUBLIC_URL: 'https://api.example.com', ASSETS_URL: 'https://cdn.example.com/x/' }).assetsUrl).toBe('https://cdn.example.com/x');
  });

  test('S3 settings switch the asset store to S3', () => {
    const config = loadConfig({ S3_BUCKET: 'b', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_PREFIX: 'prod/' });
    expect(config.s3).toMatchObject({ bucket: 'b', endpoint: 'http://127.0.0.1:9000', prefix: 'prod/' });
  });

  test('malformed numbers are refused at start with the variable named', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow('PORT');
    expect(() => loadConfig({ CREDITS_ONBOARDING: '-5' })).toThrow('CREDITS_ONBOARDING');
  });
});

// Where uploaded images and audio live: a local folder (embedded default) or S3 through
// Bun's built-in client. Keys carry an unguessable token and their file extension.
import { copyFile, mkdir, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { S3Settings } from '../config.ts';

export interface AssetStore {
  readonly kind: 'local' | 's3';
  put(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
  /** A file on disk stored under `key`, streamed (a recording may be hundreds of megabytes). */
  putFile(key: string, path: string, contentType: string): Promise<void>;
  /** The stored bytes, or undefined when there is no such key. */
  get(key: string): Promise<Blob | undefined>;
  /** The stored object's size, read by byte range as asked (nothing is read ahead), or undefined. */
  open(key: string): Promise<StoredObject | undefined>;
  delete(key: string): Promise<void>;
  /** Remove every key under the prefix (a folder-like path ending in `/`). */
  deletePrefix(prefix: string): Promise<void>;
  /** Keys under a prefix (tests and the recovery sweep). */
  list(prefix: string): Promise<string[]>;
}

export interface StoredObject {
  size: number;
  /** The bytes from `start` up to `end` (exclusive), as they are read from the store. */
  read(start: number, end: number): ReadableStream<Uint8Array>;
}

const SAFE_KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;

export function assertSafeKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.split('/').some((part) => part === '.' || part === '..')) {
    throw new Error(`Unsafe asset key: ${key}`);
  }
}

export const CONTENT_TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  mp4: 'video/mp4',
  json: 'application/json',
};

export function contentTypeOf(key: string): string {
  return CONTENT_TYPES[key.slice(key.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
}

export class LocalAssetStore implements AssetStore {
  readonly kind = 'local';
  constructor(readonly root: string) {}

  private pathOf(key: string): string {
    assertSafeKey(key.replace(/\/$/, ''));
    return join(this.root, key);
  }

  async put(key: string, bytes: Uint8Array, _contentType?: string): Promise<void> {
    // The content type follows from the key's extension when served.
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    await Bun.write(path, bytes);
  }

  async putFile(key: string, path: string, _contentType?: string): Promise<void> {
    const destination = this.pathOf(key);
    await mkdir(dirname(destination), { recursive: true });
    await copyFile(path, destination);
  }

  async get(key: string): Promise<Blob | undefined> {
    const file = Bun.file(this.pathOf(key));
    return (await file.exists()) ? file : undefined;
  }

  async open(key: string): Promise<StoredObject | undefined> {
    const file = await this.get(key);
    return file && { size: file.size, read: (start, end) => file.slice(start, end).stream() };
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    await rm(this.pathOf(prefix), { recursive: true, force: true });
  }

  async list(prefix: string): Promise<string[]> {
    const base = this.pathOf(prefix);
    if (!(await stat(base).catch(() => undefined))) return [];
    const keys: string[] = [];
    for await (const relative of new Bun.Glob('**/*').scan({ cwd: base, onlyFiles: true })) {
      keys.push(prefix.replace(/\/?$/, '/') + relative);
    }
    return keys.sort();
  }
}

export class S3AssetStore implements AssetStore {
  readonly kind = 's3';
  private readonly client: Bun.S3Client;
  constructor(private readonly settings: S3Settings) {
    this.client = new Bun.S3Client({
      bucket: settings.bucket,
      endpoint: settings.endpoint,
      region: settings.region,
      accessKeyId: settings.accessKeyId,
      secretAccessKey: settings.secretAccessKey,
    });
  }

  private keyOf(key: string): string {
    assertSafeKey(key.replace(/\/$/, ''));
    return this.settings.prefix + key;
  }

  async put(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
    await this.client.write(this.keyOf(key), bytes, { type: contentType });
  }

  async putFile(key: string, path: string, contentType: string): Promise<void> {
    // Bun streams a file it is given (a multipart upload when large) rather than holding it in memory.
    await this.client.write(this.keyOf(key), Bun.file(path), { type: contentType });
  }

  async open(key: string): Promise<StoredObject | undefined> {
    const file = this.client.file(this.keyOf(key));
    try {
      const { size } = await file.stat();
      // Each read is one ranged GET, streamed to its reader.
      return { size, read: (start, end) => file.slice(start, end).stream() };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async get(key: string): Promise<Blob | undefined> {
    // The bytes, not the lazy S3File: Bun turns `new Response(s3File)` into a redirect to a
    // presigned URL and throws when given headers, so /assets/* could not serve it.
    // One GET also replaces a HEAD then GET, which raced with deletes.
    try {
      const bytes = await this.client.file(this.keyOf(key)).bytes();
      return new Blob([bytes as Uint8Array<ArrayBuffer>], { type: contentTypeOf(key) });
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let startAfter: string | undefined;
    for (;;) {
      const page = await this.client.list({ prefix: this.keyOf(prefix), startAfter, maxKeys: 1000 });
      for (const item of page.contents ?? []) keys.push(item.key.slice(this.settings.prefix.length));
      if (!page.isTruncated || !page.contents?.length) return keys;
      startAfter = page.contents[page.contents.length - 1]!.key;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.delete(this.keyOf(key));
  }

  async deletePrefix(prefix: string): Promise<void> {
    for (const key of await this.list(prefix)) await this.client.delete(this.keyOf(key));
  }
}

/** S3 names a missing key NoSuchKey in a GET's body; a HEAD has no body, only its 404. */
function isMissing(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    code === 'NoSuchKey' || code === 'NotFound' || (typeof message === 'string' && /\b404\b|not found/i.test(message))
  );
}

export function createAssetStore(options: { s3?: S3Settings; dataDir: string }): AssetStore {
  return options.s3 ? new S3AssetStore(options.s3) : new LocalAssetStore(resolve(options.dataDir, 'assets'));
}

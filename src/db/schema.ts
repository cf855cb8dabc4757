// Every table, gathered for drizzle (typed queries) and drizzle-kit (migrations).
// Each table is defined beside the feature that owns it.
export * from '../accounts/schema.ts';
export * from '../auth/schema.ts';
export * from '../console/schema.ts';
export * from '../credits/schema.ts';
export * from '../identities/schema.ts';
export * from '../identities/training-upgrades-schema.ts';
export * from '../knowledge/schema.ts';
export * from '../limits/schema.ts';
export * from '../publishable-keys/schema.ts';
export * from '../recordings/schema.ts';
export * from '../sessions/schema.ts';
export * from '../tools/schema.ts';
export * from '../visitors/schema.ts';
export * from '../voices/schema.ts';
export * from '../webhooks/schema.ts';
export * from '../workers/schema.ts';

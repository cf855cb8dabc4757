// Limits: per account (sessions and identity creates, account-limits.ts) and per key over a sliding
// window (console sign-ins and sign-ups, attempts.ts). Counted in the database, so replicas
// of the control plane share them. The features own their counting (src/sessions/start-limits.ts,
// src/identities/training-limits.ts); this is the vocabulary and the machinery.

export * from './account-limits.ts';
export * from './attempts.ts';

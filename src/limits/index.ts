// Limits: per account (sessions and identity creates, limits.ts) and per key over a sliding
// window (console sign-ins and sign-ups, attempts.ts). Counted in the database, so replicas
// of the control plane share them. The features own their counting (src/sessions/limits.ts,
// src/identities/limits.ts); this is the vocabulary and the machinery.

export * from './attempts.ts';
export * from './limits.ts';

// The knowledge's metrics, in the API process's registry (src/metrics, GET /metrics).
import { Histogram } from 'prom-client';
import { registry } from '../metrics/index.ts';

export const retrievalSeconds = new Histogram({
  name: 'likeness_knowledge_retrieval_seconds',
  help: "A turn's retrieval (POST /internal/sessions/{id}/knowledge): the question embedded and the session's documents searched, by path (pgvector, exact).",
  labelNames: ['path'] as const,
  buckets: [0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

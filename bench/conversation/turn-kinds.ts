// The kinds of turn bench/conversation measures (issue 45 points 2–4): a plain question, one a
// webhook tool answers (the customer's receiver answers in 50 ms), one a document answers. Each
// gives the identity's fields, the question in the session's language and what the answer must
// say to count as using the tool's result or the passage ("the answer's first words" are the
// first caption that says it).
import { toolReceiver } from '../../test/support/tool-receiver.ts';

export const TURN_KINDS = ['plain', 'tool', 'document'] as const;
export type TurnKind = (typeof TURN_KINDS)[number];
export const BENCH_LANGUAGES = ['en', 'es'] as const;
export type BenchLanguage = (typeof BENCH_LANGUAGES)[number];

/** How long the customer's webhook takes to answer (the figure). */
export const TOOL_ANSWER_MS = 50;

const QUESTIONS: Record<TurnKind, Record<BenchLanguage, string>> = {
  plain: { en: 'What is the weather like in Paris today?', es: '¿Qué tiempo hace hoy en París?' },
  tool: {
    en: 'Can you check the status of my order number 4417?',
    es: '¿Puedes ver el estado de mi pedido número 4417?',
  },
  document: { en: 'What time do you open on Sundays?', es: '¿A qué hora abren los domingos?' },
};

const PROMPTS: Record<BenchLanguage, string> = {
  en: 'You are Ada, who answers for a small bakery in Paris. Answer in one short sentence.',
  es: 'Eres Ada y atiendes en una pequeña panadería de París. Responde en una frase corta.',
};

/** What the order lookup answers, and the words a faithful reply says. */
const ORDER: Record<BenchLanguage, { answer: object; says: RegExp }> = {
  en: { answer: { status: 'shipped yesterday by courier', eta: 'Friday' }, says: /shipped|friday/i },
  es: { answer: { estado: 'enviado ayer por mensajero', llegada: 'viernes' }, says: /enviad|viernes/i },
};

/** The document, and the words of its answer to the question. */
const HOURS: Record<BenchLanguage, { text: string; says: RegExp }> = {
  en: {
    text: '# Opening hours\n\nThe bakery opens at seven in the morning from Monday to Saturday, and at nine on Sundays. It closes at six in the evening every day.\n\n# Prices\n\nA baguette costs one euro twenty. A croissant costs one euro fifty.\n',
    says: /\bnine\b|\b9\b/i,
  },
  es: {
    text: '# Horario\n\nLa panadería abre a las siete de la mañana de lunes a sábado, y a las nueve los domingos. Cierra a las seis de la tarde todos los días.\n\n# Precios\n\nUna baguette cuesta un euro veinte. Un cruasán cuesta un euro cincuenta.\n',
    says: /\bnueve\b|\b9\b/i,
  },
};

export interface PreparedKind {
  question: string;
  /** Form fields of the identity, beyond its photo, name and language. */
  identityFields: Record<string, string>;
  /** The words of an answer that uses the tool's result or the passage; none for plain turns. */
  says?: RegExp;
  /** Webhook calls the receiver took (tool turns). */
  calls(): number;
  stop(): void;
}

/** Makes what a kind needs in the account (the tool and its receiver, the document, ready). */
export async function prepareKind(
  kind: TurnKind,
  language: BenchLanguage,
  api: (method: string, path: string, body?: BodyInit, json?: boolean) => Promise<Response>,
): Promise<PreparedKind> {
  const base = { question: QUESTIONS[kind][language], calls: () => 0, stop: () => {} };
  const identityFields = { prompt: PROMPTS[language] };
  if (kind === 'plain') return { ...base, identityFields };
  if (kind === 'tool') {
    const receiver = toolReceiver(async () => {
      await Bun.sleep(TOOL_ANSWER_MS);
      return ORDER[language].answer;
    });
    const created = await api(
      'POST',
      '/v1/tools',
      JSON.stringify({
        name: 'order_status',
        type: 'webhook',
        description: 'Looks up the status of an order by its number.',
        parameters: {
          type: 'object',
          properties: { order_id: { type: 'string', description: 'The order number' } },
          required: ['order_id'],
        },
        url: receiver.url,
      }),
      true,
    );
    const tool = (await created.json()) as { tool_id: string; secret: string };
    if (!created.ok) throw new Error(`the tool was refused: ${JSON.stringify(tool)}`);
    receiver.secret = tool.secret;
    return {
      ...base,
      identityFields: { ...identityFields, tool_ids: JSON.stringify([tool.tool_id]) },
      says: ORDER[language].says,
      calls: () => receiver.calls.length,
      stop: () => receiver.stop(),
    };
  }
  const form = new FormData();
  form.append('file', new Blob([HOURS[language].text]), 'hours.md');
  const uploaded = (await (await api('POST', '/v1/documents', form)).json()) as { document_id: string };
  for (const deadline = Date.now() + 120_000; ; ) {
    const document = (await (await api('GET', `/v1/documents/${uploaded.document_id}`)).json()) as {
      status: string;
      detail: string | null;
    };
    if (document.status === 'ready') break;
    if (document.status === 'failed' || Date.now() > deadline)
      throw new Error(`the document is ${document.status}: ${document.detail}`);
    await Bun.sleep(200);
  }
  return {
    ...base,
    identityFields: { ...identityFields, document_ids: JSON.stringify([uploaded.document_id]) },
    says: HOURS[language].says,
  };
}

// The offline model's tool calls (Qwen2.5 through node-llama-cpp's function calling): the
// session's function tools as node-llama-cpp `functions`, the calls and results of the chat
// context as the model turns the chat wrapper renders in Qwen's <tool_call>/<tool_response>
// format, and the model's answer read back as agents' FunctionCalls (agents runs them, then
// asks again with their results). Qwen2.5-Coder-0.5B writes the call's JSON without the
// <tool_call> tags node-llama-cpp waits for ({"name": "get_appointment", "arguments": {...}}),
// so a reply that is such a JSON object naming a tool is a call too.
import type { llm } from '@livekit/agents';
import type { LlamaFunctionCall, LlamaFunctions, LlamaHistoryItem, LlamaModelTurn } from './llama.ts';

/** JSON Schema keywords node-llama-cpp's GBNF converter understands (others are dropped, not rejected). */
const GBNF_KEYWORDS = new Set([
  'type',
  'description',
  'properties',
  'required',
  'enum',
  'const',
  'items',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'oneOf',
]);
const GBNF_FORMATS = new Set(['date', 'time', 'date-time']);

/** A tool's JSON Schema cut to what GBNF can express; the tool's own check (ajv) still sees the whole. */
export function gbnfSchema(schema: unknown): Record<string, unknown> {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return { type: 'object', properties: {} };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (key === 'format' && typeof value === 'string' && GBNF_FORMATS.has(value)) out.format = value;
    if (!GBNF_KEYWORDS.has(key)) continue;
    if (key === 'description' && typeof value === 'string') out.description = withoutExamples(value);
    else if (key === 'properties' && value && typeof value === 'object')
      out.properties = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, gbnfSchema(sub)]));
    else if (key === 'items') out.items = gbnfSchema(value);
    else if (key === 'oneOf' && Array.isArray(value)) out.oneOf = value.map(gbnfSchema);
    else out[key] = value;
  }
  // A schema without a type (e.g. only a description) is any value: GBNF needs one.
  if (!('type' in out) && !('enum' in out) && !('const' in out) && !('oneOf' in out))
    out.type = ['string', 'number', 'boolean', 'null'];
  if (out.type === 'object') out.additionalProperties = false;
  return out;
}

/** The function tools of a chat's tool context as node-llama-cpp functions; undefined without any. */
export function offlineFunctions(toolCtx: llm.ToolContext | undefined): LlamaFunctions | undefined {
  const tools = Object.values(toolCtx?.functionTools ?? {});
  if (tools.length === 0) return undefined;
  return Object.fromEntries(
    tools.map((tool) => [
      tool.name,
      { description: withoutExamples(tool.description), params: gbnfSchema(tool.parameters) },
    ]),
  );
}

/** Where a description gives examples: "e.g. …", "for example …", "such as …" and their kin, to the clause's end. */
const EXAMPLE =
  /\s*[(,;:–—-]?\s*(?:e\.\s?g\.|eg\.|for (?:example|instance)|such as|por ejemplo|p\.\s?ej\.|np\.|na przykład|наприклад)[\s:,]+(?:[^.;)]|\.(?=\S))*[.;)]?/giu;

/**
 * A description without its examples: the 0.5B model copied "2025-05-06" from "The day of the
 * appointment, e.g. Tuesday or 2025-05-06" into every call that lacked a date
 * (bench/tools/choice.ts), so the offline model never sees them.
 */
export function withoutExamples(description: string | undefined): string | undefined {
  if (!description) return description;
  const cut = description.replace(EXAMPLE, (match) => (/[.;]$/.test(match) ? match.slice(-1) : '')).trim();
  return cut || description;
}

/**
 * The argument of `call` that only a description could have given: a value (three characters
 * or more) that the descriptions the model read contain (an example withoutExamples did not
 * recognise) and the visitor never said. Null when every argument came from elsewhere.
 */
export function exampleCopied(
  call: { params: unknown },
  tool: { description?: string; parameters?: unknown },
  visitorSaid: string,
): string | null {
  // The descriptions as the model read them: examples cut out it never saw (a "Saturday" it
  // translated from "sábado" is the visitor's, even where an example said Saturday too).
  const described = descriptionsOf(tool)
    .map((text) => withoutExamples(text))
    .join(' ')
    .toLowerCase();
  const said = visitorSaid.toLowerCase();
  const values: string[] = [];
  const walk = (value: unknown) => {
    if (typeof value === 'string' || typeof value === 'number') values.push(String(value));
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(call.params);
  return (
    values.find((value) => {
      const v = value.trim().toLowerCase();
      return v.length >= 3 && described.includes(v) && !said.includes(v);
    }) ?? null
  );
}

function descriptionsOf(schema: unknown): string[] {
  if (!schema || typeof schema !== 'object') return [];
  return Object.entries(schema as Record<string, unknown>).flatMap(([key, value]) =>
    key === 'description' && typeof value === 'string' ? [value] : descriptionsOf(value),
  );
}

/** agents' tool output is the JSON of what the tool returned: a string result reads as itself. */
function resultText(output: string): string {
  try {
    const parsed: unknown = JSON.parse(output);
    return typeof parsed === 'string' ? parsed : output;
  } catch {
    return output;
  }
}

function parseArgs(args: string): unknown {
  try {
    return JSON.parse(args || '{}');
  } catch {
    return {};
  }
}

/** A function call of the chat context as a call in the model's turn (its result joined by call id). */
export function llamaFunctionCall(item: llm.FunctionCall): LlamaFunctionCall {
  return { type: 'functionCall', name: item.name, params: parseArgs(item.args) };
}

/** Sets a call's result, found by the agents call it came from. */
export function setFunctionResult(
  calls: Map<string, LlamaFunctionCall>,
  output: llm.FunctionCallOutput,
): LlamaFunctionCall | undefined {
  const call = calls.get(output.callId);
  if (call) call.result = resultText(output.output);
  return call;
}

/** Whether the model turn holds a function call (a history ending in one continues after its result). */
export function isToolTurn(item: LlamaHistoryItem | undefined): item is LlamaModelTurn {
  return item?.type === 'model' && item.response.some((part) => typeof part !== 'string');
}

/**
 * A reply that is only a call written as JSON, without the tags ({"name": …, "arguments": {…}},
 * maybe in a ``` fence): the call, when it names one of `names`; null for anything else.
 */
export function parseTextCall(text: string, names: readonly string[]): { name: string; params: unknown } | null {
  const body = text
    .trim()
    .replace(/^<tool_call>\s*|\s*<\/tool_call>$/g, '')
    .replace(/^```(?:json)?\s*|\s*```$/g, '')
    .trim();
  if (!body.startsWith('{')) return null;
  try {
    const parsed = JSON.parse(body) as { name?: unknown; arguments?: unknown; parameters?: unknown };
    const params = parsed.arguments ?? parsed.parameters ?? {};
    if (typeof parsed.name !== 'string' || !names.includes(parsed.name)) return null;
    if (!params || typeof params !== 'object' || Array.isArray(params)) return null;
    return { name: parsed.name, params };
  } catch {
    return null;
  }
}

/** Whether text so far may still become a call written as JSON (held back from speech until it is known). */
export function mayBeTextCall(text: string): boolean {
  const start = text.trimStart();
  return start === '' || start.startsWith('{') || start.startsWith('`') || start.startsWith('<');
}

/** Text that is surely the start of a call written out (a JSON object, Qwen's tag, a JSON code block), not words. */
export function textCallBegun(text: string): boolean {
  return /^(?:\{\s*"|<tool_call>|```(?:json)?\s*\{)/.test(text.trimStart());
}

/**
 * The prompt for the reply after calls: their results added to the visitor's last turn, where
 * the 0.5B model reads them (given as an instruction, it answered "Yes, my appointment on
 * Tuesday is still on." to a cancelled one, 3 wordings of 3).
 */
export function withToolResults(prompt: LlamaHistoryItem[], turn: LlamaModelTurn): LlamaHistoryItem[] {
  const results = turn.response
    .filter((part): part is LlamaFunctionCall => typeof part !== 'string')
    .map((call) => `(${call.name} found: ${String(call.result ?? 'nothing')})`);
  const last = prompt.at(-1);
  if (last?.type !== 'user') return [...prompt, { type: 'user', text: results.join('\n') }];
  return [...prompt.slice(0, -1), { type: 'user', text: `${last.text}\n${results.join('\n')}` }];
}

/** What the model is told with the tools: call one only when the visitor asks for what it does. */
export const TOOLS_RULE =
  "Call a function only when the visitor's last message asks for exactly what it does, with every argument it needs; otherwise answer in words.";

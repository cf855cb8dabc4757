// Tool results for bench/tools/results.ts: 40 of them (20 English, 20 Spanish), each a visitor's
// question, the call the model made for it, what came back (the result the model reads, as
// agent/conversation/tools.ts words it for each outcome), and what a faithful reply must say:
// every `says` pattern (its key facts, its negation) and none of `never` (the opposite, a
// refusal of a result that came). Patterns are matched on the reply in lower case with accents
// folded.
// biome-ignore-all lint/style/noExcessiveLinesPerFile: the evaluation set: one entry per tool result, in English and Spanish
import type { ToolCallOutcome } from '../../src/contract/index.ts';

export interface ResultCase {
  language: 'en' | 'es';
  kind: 'found' | 'not_found' | 'refused' | 'error' | 'empty';
  question: string;
  call: { name: string; args: Record<string, unknown> };
  outcome: ToolCallOutcome;
  result: string;
  says: RegExp[];
  never: RegExp[];
}

const REFUSAL = /can'?t assist|cannot assist|can'?t help with|no puedo ayudar/;
const CLAIMS_FOUND = /shipped|on its way|confirmed|is ready|enviado|confirmad|esta listo/;

const en = (
  kind: ResultCase['kind'],
  question: string,
  call: ResultCase['call'],
  outcome: ToolCallOutcome,
  result: string,
  says: RegExp[],
  never: RegExp[] = [],
): ResultCase => ({ language: 'en', kind, question, call, outcome, result, says, never: [...never, REFUSAL] });
const es = (...args: Parameters<typeof en>): ResultCase => ({ ...en(...args), language: 'es' });

const order = (id: string) => ({ name: 'get_order', args: { order_id: id } });
const appointment = (date: string) => ({ name: 'get_appointment', args: { date } });
const hours = (day: string) => ({ name: 'get_opening_hours', args: { day } });
const leaflet = (email: string) => ({ name: 'send_leaflet', args: { email } });
const stock = (item: string) => ({ name: 'check_stock', args: { item } });

export const RESULT_CASES: ResultCase[] = [
  // English: found
  en(
    'found',
    'Can you check the status of my order number 4417?',
    order('4417'),
    'ok',
    '{"status": "shipped yesterday by courier", "eta": "Friday"}',
    [/shipped/, /friday/],
  ),
  en(
    'found',
    'Is my appointment on Tuesday still on?',
    appointment('Tuesday'),
    'ok',
    'Tuesday at 14:30 with Dr. Lee: confirmed.',
    [/14:30|2:30/, /lee|confirmed/],
  ),
  en(
    'found',
    'When are you open on Saturday?',
    hours('Saturday'),
    'ok',
    '{"day": "Saturday", "opens": "09:00", "closes": "13:00"}',
    [/9|nine/, /13|1 ?pm|one/],
  ),
  en(
    'found',
    'Do you have the blue helmet in size M?',
    stock('blue helmet M'),
    'ok',
    '{"in_stock": true, "quantity": 3, "price_eur": 45}',
    [/3|three|in stock|have/, /45/],
  ),
  en(
    'found',
    'What is the status of order 5120?',
    order('5120'),
    'ok',
    'Ready for pickup at the Calle Mayor shop since this morning.',
    [/pick ?up|ready/, /mayor/],
  ),
  // English: not found
  en(
    'not_found',
    'Can you check my order 9000?',
    order('9000'),
    'ok',
    '{"found": false, "message": "No order with number 9000."}',
    [/\bno\b|not|couldn'?t|can'?t find|could not/],
    [CLAIMS_FOUND],
  ),
  en(
    'not_found',
    'Do I have an appointment on Monday?',
    appointment('Monday'),
    'ok',
    'No appointment on Monday.',
    [/\bno\b|not|don'?t|do not/],
    [/confirmed|you have an appointment on monday/],
  ),
  en(
    'not_found',
    'Do you have red gloves in stock?',
    stock('red gloves'),
    'ok',
    '{"in_stock": false, "quantity": 0}',
    [/\bno\b|not|out of stock|0|zero|don'?t/],
    [/\bwe have (?!no)/],
  ),
  en(
    'not_found',
    'Where is my order 1234?',
    order('1234'),
    'ok',
    'Order 1234 not found.',
    [/not found|couldn'?t find|no order|not|could not/],
    [CLAIMS_FOUND],
  ),
  // English: refused by the business
  en(
    'refused',
    'Is my appointment on Tuesday still on?',
    appointment('Tuesday'),
    'ok',
    'Cancelled by the clinic.',
    [/cancel/],
    [/still on|confirmed/],
  ),
  en(
    'refused',
    'Can you send the leaflet to ana@example.com?',
    leaflet('ana@example.com'),
    'ok',
    'Not sent: the address is on the unsubscribe list.',
    [/not sent|couldn'?t send|can'?t send|unsubscribe|not|could not/],
    [/\b(i have|i've|has been|was) sent\b/],
  ),
  en(
    'refused',
    'Can I still return order 4417?',
    order('4417'),
    'ok',
    '{"returnable": false, "reason": "the 30-day return window ended"}',
    [/not|no|can'?t|cannot/, /30|window|ended|expired/],
  ),
  en(
    'refused',
    'Is my order 7001 going to arrive tomorrow?',
    order('7001'),
    'ok',
    '{"status": "held at customs", "eta": "unknown"}',
    [/customs/],
    [/tomorrow it will|arrives tomorrow/],
  ),
  // English: errors
  en(
    'error',
    'Can you check my order 4417?',
    order('4417'),
    'error',
    'get_order failed: the service could not be reached. Tell the visitor you could not do it right now, and do not guess a result.',
    [/couldn'?t|could not|can'?t|cannot|unable|not able|sorry|right now|moment/],
    [CLAIMS_FOUND],
  ),
  en(
    'error',
    'When are you open on Sunday?',
    hours('Sunday'),
    'timeout',
    'get_opening_hours did not answer in time; nothing is known about its result. Tell the visitor you could not check it right now, and do not guess.',
    [/couldn'?t|could not|can'?t|cannot|unable|not able|sorry|right now|moment/],
    [/\b\d{1,2}(:\d\d)? ?(am|pm)\b/],
  ),
  en(
    'error',
    'Is my appointment on Friday still on?',
    appointment('Friday'),
    'error',
    'get_appointment failed: the service refused the call (HTTP 500). Tell the visitor you could not do it right now, and do not guess a result.',
    [/couldn'?t|could not|can'?t|cannot|unable|not able|sorry|right now|moment/],
    [/confirmed|still on/],
  ),
  en(
    'error',
    'Do you have size 42 shoes?',
    stock('shoes 42'),
    'error',
    "check_stock failed: the visitor's app is not connected. Tell the visitor you could not do it right now, and do not guess a result.",
    [/couldn'?t|could not|can'?t|cannot|unable|not able|sorry|right now|moment/],
    [/\bwe have\b|in stock/],
  ),
  // English: empty (done, nothing to say)
  en(
    'empty',
    'Please send the leaflet to ana@example.com.',
    leaflet('ana@example.com'),
    'ok',
    'send_leaflet was done.',
    [/sent|done|on its way|will receive|have sent/],
  ),
  en(
    'empty',
    'Send the price list to bob@example.com, please.',
    leaflet('bob@example.com'),
    'ok',
    'send_leaflet was done.',
    [/sent|done|on its way|will receive|have sent/],
  ),
  en(
    'empty',
    'Can you email me the leaflet at eva@example.com?',
    leaflet('eva@example.com'),
    'ok',
    'send_leaflet was done.',
    [/sent|done|on its way|will receive|have sent/],
  ),

  // Spanish: found
  es(
    'found',
    '¿Puedes ver el estado de mi pedido número 4417?',
    order('4417'),
    'ok',
    '{"estado": "enviado ayer por mensajería", "llegada": "viernes"}',
    [/enviad/, /viernes/],
  ),
  es(
    'found',
    '¿Sigue en pie mi cita del martes?',
    appointment('martes'),
    'ok',
    'Martes a las 14:30 con la Dra. Lee: confirmada.',
    [/14:30|dos y media/, /lee|confirmad/],
  ),
  es(
    'found',
    '¿A qué hora abren el sábado?',
    hours('sábado'),
    'ok',
    '{"dia": "sábado", "abre": "09:00", "cierra": "13:00"}',
    [/9|nueve/, /13|una/],
  ),
  es(
    'found',
    '¿Tienen el casco azul en talla M?',
    stock('casco azul M'),
    'ok',
    '{"disponible": true, "cantidad": 3, "precio_eur": 45}',
    [/3|tres|disponible|tenemos|hay/, /45/],
  ),
  es(
    'found',
    '¿Cómo va el pedido 5120?',
    order('5120'),
    'ok',
    'Listo para recoger en la tienda de la Calle Mayor desde esta mañana.',
    [/recoger|listo/, /mayor/],
  ),
  // Spanish: not found
  es(
    'not_found',
    '¿Puedes mirar mi pedido 9000?',
    order('9000'),
    'ok',
    '{"encontrado": false, "mensaje": "No hay ningún pedido con el número 9000."}',
    [/\bno\b|ningun/],
    [CLAIMS_FOUND],
  ),
  es(
    'not_found',
    '¿Tengo cita el lunes?',
    appointment('lunes'),
    'ok',
    'No hay ninguna cita el lunes.',
    [/\bno\b|ningun/],
    [/confirmad|tienes una cita el lunes/],
  ),
  es(
    'not_found',
    '¿Tienen guantes rojos?',
    stock('guantes rojos'),
    'ok',
    '{"disponible": false, "cantidad": 0}',
    [/\bno\b|agotad|0|cero|ningun/],
    [/\btenemos (?!no)/],
  ),
  es(
    'not_found',
    '¿Dónde está mi pedido 1234?',
    order('1234'),
    'ok',
    'Pedido 1234 no encontrado.',
    [/no encontr|no hay|\bno\b/],
    [CLAIMS_FOUND],
  ),
  // Spanish: refused
  es(
    'refused',
    '¿Sigue en pie mi cita del martes?',
    appointment('martes'),
    'ok',
    'Cancelada por la clínica.',
    [/cancelad/],
    [/sigue en pie|confirmad/],
  ),
  es(
    'refused',
    '¿Puedes enviar el folleto a ana@example.com?',
    leaflet('ana@example.com'),
    'ok',
    'No enviado: la dirección está en la lista de bajas.',
    [/no (se ha |he |se )?(podido )?envi|no envi|\bno\b|baja/],
    [/\b(he|ha sido|fue) enviado\b/],
  ),
  es(
    'refused',
    '¿Todavía puedo devolver el pedido 4417?',
    order('4417'),
    'ok',
    '{"devolvible": false, "motivo": "terminó el plazo de 30 días"}',
    [/\bno\b/, /30|plazo|termin/],
  ),
  es(
    'refused',
    '¿Llegará mañana mi pedido 7001?',
    order('7001'),
    'ok',
    '{"estado": "retenido en aduanas", "llegada": "desconocida"}',
    [/aduana/],
    [/llegara manana|llega manana/],
  ),
  // Spanish: errors
  es(
    'error',
    '¿Puedes mirar mi pedido 4417?',
    order('4417'),
    'error',
    'get_order failed: the service could not be reached. Tell the visitor you could not do it right now, and do not guess a result.',
    [/no (he )?(podido|puedo)|lo siento|ahora mismo|en este momento|perdon/],
    [CLAIMS_FOUND],
  ),
  es(
    'error',
    '¿A qué hora abren el domingo?',
    hours('domingo'),
    'timeout',
    'get_opening_hours did not answer in time; nothing is known about its result. Tell the visitor you could not check it right now, and do not guess.',
    [/no (he )?(podido|puedo)|lo siento|ahora mismo|en este momento|perdon/],
    [/\ba las \d/],
  ),
  es(
    'error',
    '¿Sigue en pie mi cita del viernes?',
    appointment('viernes'),
    'error',
    'get_appointment failed: the service refused the call (HTTP 500). Tell the visitor you could not do it right now, and do not guess a result.',
    [/no (he )?(podido|puedo)|lo siento|ahora mismo|en este momento|perdon/],
    [/confirmad|sigue en pie/],
  ),
  es(
    'error',
    '¿Tienen zapatos del 42?',
    stock('zapatos 42'),
    'error',
    "check_stock failed: the visitor's app is not connected. Tell the visitor you could not do it right now, and do not guess a result.",
    [/no (he )?(podido|puedo)|lo siento|ahora mismo|en este momento|perdon/],
    [/\btenemos\b|disponible/],
  ),
  // Spanish: empty
  es(
    'empty',
    'Envía el folleto a ana@example.com, por favor.',
    leaflet('ana@example.com'),
    'ok',
    'send_leaflet was done.',
    [/enviad|hecho|listo|recibir|envie|he enviado/],
  ),
  es(
    'empty',
    'Manda la lista de precios a bob@example.com.',
    leaflet('bob@example.com'),
    'ok',
    'send_leaflet was done.',
    [/enviad|hecho|listo|recibir|envie|he enviado/],
  ),
  es('empty', '¿Me mandas el folleto a eva@example.com?', leaflet('eva@example.com'), 'ok', 'send_leaflet was done.', [
    /enviad|hecho|listo|recibir|envie|he enviado/,
  ]),
];

/** The tools the cases call, as an identity would define them (no examples in the descriptions). */
export const RESULT_TOOLS = [
  {
    name: 'get_order',
    description: "Looks up the status of the visitor's order by its number.",
    parameters: {
      type: 'object',
      properties: { order_id: { type: 'string', description: 'The order number' } },
      required: ['order_id'],
    },
  },
  {
    name: 'get_appointment',
    description: "Looks up the visitor's appointment on a day.",
    parameters: {
      type: 'object',
      properties: { date: { type: 'string', description: 'The day of the appointment' } },
      required: ['date'],
    },
  },
  {
    name: 'get_opening_hours',
    description: "The shop's opening hours on a day.",
    parameters: {
      type: 'object',
      properties: { day: { type: 'string', description: 'The day of the week' } },
      required: ['day'],
    },
  },
  {
    name: 'send_leaflet',
    description: 'Sends the price leaflet to an email address.',
    parameters: {
      type: 'object',
      properties: { email: { type: 'string', description: 'Where to send it' } },
      required: ['email'],
    },
  },
  {
    name: 'check_stock',
    description: 'Whether an item is in stock, and its price.',
    parameters: {
      type: 'object',
      properties: { item: { type: 'string', description: 'The item' } },
      required: ['item'],
    },
  },
];

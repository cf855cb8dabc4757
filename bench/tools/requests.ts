// The tool-choice set (bench/tools/choice.ts): what a visitor types to a dental clinic's
// receptionist, with the call that should follow (the tool and its arguments, each argument
// matched by the words it must contain) or none. The tools are the ones a customer would
// give such an identity; `end_session` ends the conversation.
import type { SpokenLanguage } from '../../src/contract/index.ts';

export interface BenchTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

const oneString = (name: string, description: string) => ({
  type: 'object',
  properties: { [name]: { type: 'string', description } },
  required: [name],
});

export const TOOLS: BenchTool[] = [
  {
    name: 'get_appointment',
    description: "Looks up the visitor's appointment on a date.",
    parameters: oneString('date', 'The day of the appointment, e.g. Tuesday or 2025-05-06'),
  },
  {
    name: 'cancel_appointment',
    description: "Cancels the visitor's appointment on a date.",
    parameters: oneString('date', 'The day of the appointment to cancel'),
  },
  {
    name: 'get_opening_hours',
    description: "The clinic's opening hours on a day of the week.",
    parameters: oneString('day', 'The day of the week, e.g. Saturday'),
  },
  {
    name: 'send_leaflet',
    description: "Emails the clinic's price leaflet to an address.",
    parameters: oneString('email', "The visitor's email address"),
  },
  {
    name: 'end_session',
    description: 'Ends the conversation, when the visitor says goodbye or wants to stop.',
    parameters: { type: 'object', properties: {} },
  },
];

export interface ToolRequest {
  text: string;
  language: SpokenLanguage;
  /** The call that should follow; null: none fits (the model should answer in words). */
  expect: { name: string; args: Record<string, string[]> } | null;
}

const call = (name: string, args: Record<string, string[]> = {}) => ({ name, args });

export const REQUESTS: ToolRequest[] = [
  {
    language: 'en',
    text: 'Is my appointment on Tuesday still on?',
    expect: call('get_appointment', { date: ['tuesday'] }),
  },
  {
    language: 'en',
    text: 'Do I have an appointment on Friday?',
    expect: call('get_appointment', { date: ['friday'] }),
  },
  {
    language: 'en',
    text: 'Can you check my appointment for 2025-05-06?',
    expect: call('get_appointment', { date: ['2025-05-06'] }),
  },
  {
    language: 'en',
    text: 'What time is my appointment on Monday?',
    expect: call('get_appointment', { date: ['monday'] }),
  },
  {
    language: 'en',
    text: 'Please cancel my appointment on Thursday.',
    expect: call('cancel_appointment', { date: ['thursday'] }),
  },
  {
    language: 'en',
    text: "I can't come on Wednesday, cancel that appointment please.",
    expect: call('cancel_appointment', { date: ['wednesday'] }),
  },
  {
    language: 'en',
    text: 'Cancel my appointment for 2025-06-12.',
    expect: call('cancel_appointment', { date: ['2025-06-12'] }),
  },
  { language: 'en', text: 'When are you open on Saturday?', expect: call('get_opening_hours', { day: ['saturday'] }) },
  {
    language: 'en',
    text: 'What are your opening hours on Sunday?',
    expect: call('get_opening_hours', { day: ['sunday'] }),
  },
  { language: 'en', text: 'Are you open on Monday morning?', expect: call('get_opening_hours', { day: ['monday'] }) },
  { language: 'en', text: 'How late are you open on Friday?', expect: call('get_opening_hours', { day: ['friday'] }) },
  {
    language: 'en',
    text: 'Please send the price leaflet to anna@example.com.',
    expect: call('send_leaflet', { email: ['anna@example.com'] }),
  },
  {
    language: 'en',
    text: 'Can you email me your prices? My address is tom.berg@mail.org.',
    expect: call('send_leaflet', { email: ['tom.berg@mail.org'] }),
  },
  {
    language: 'en',
    text: 'Send the leaflet to jo@clinic.net, thanks.',
    expect: call('send_leaflet', { email: ['jo@clinic.net'] }),
  },
  { language: 'en', text: "That's all, goodbye!", expect: call('end_session') },
  { language: 'en', text: 'Thanks, I want to end the call now.', expect: call('end_session') },
  { language: 'en', text: 'Bye, have a nice day.', expect: call('end_session') },
  {
    language: 'es',
    text: '¿Sigue en pie mi cita del martes?',
    expect: call('get_appointment', { date: ['martes', 'tuesday'] }),
  },
  {
    language: 'es',
    text: 'Cancela mi cita del jueves, por favor.',
    expect: call('cancel_appointment', { date: ['jueves', 'thursday'] }),
  },
  {
    language: 'es',
    text: '¿A qué hora abren el sábado?',
    expect: call('get_opening_hours', { day: ['sábado', 'sabado', 'saturday'] }),
  },
  {
    language: 'es',
    text: 'Envíame el folleto de precios a luis@correo.es.',
    expect: call('send_leaflet', { email: ['luis@correo.es'] }),
  },
  { language: 'es', text: 'Eso es todo, ¡adiós!', expect: call('end_session') },
  { language: 'en', text: 'Hello, how are you today?', expect: null },
  { language: 'en', text: 'What is the capital of France?', expect: null },
  { language: 'en', text: 'Thank you, that was helpful.', expect: null },
  { language: 'en', text: 'Do you like your job?', expect: null },
  { language: 'en', text: 'How often should I brush my teeth?', expect: null },
  { language: 'en', text: 'Is flossing really necessary?', expect: null },
  { language: 'en', text: "What's your name?", expect: null },
  { language: 'en', text: 'Tell me a fun fact about teeth.', expect: null },
  { language: 'es', text: 'Hola, ¿qué tal?', expect: null },
  { language: 'es', text: '¿Cuántos dientes tiene un adulto?', expect: null },
  { language: 'es', text: 'Muchas gracias por tu ayuda.', expect: null },
];

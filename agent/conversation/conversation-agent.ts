// The session's agent as one conversation sets it up: the identity's instructions (with the
// start's context), its tools, the passages of its documents and the visitor's memory and notes
// quoted to each generation, and before each reply the language the visitor was heard in, the
// camera's frames, and a farewell that ends the session (the offline model never called
// end_session for one).
import { llm, voice } from '@livekit/agents';
import type { ProviderSettings } from '../../src/config.ts';
import type { AgentEndedReport, ParsedDispatch } from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import type { SessionProviders } from '../providers/index.ts';
import { deliver, type Reporter } from '../reports/index.ts';
import { type CameraSampler, modelSeesCamera } from './camera.ts';
import { isFarewell } from './farewells.ts';
import { IdentityAgent } from './identity-agent.ts';
import { agentInstructions, followLanguageInstruction } from './instructions.ts';
import { KnowledgeTurns, OFFLINE_KNOWLEDGE_CHARS } from './knowledge.ts';
import type { OrderTaker } from './orders.ts';
import type { TurnQuality } from './quality.ts';
import { addQuotedData, fromVisitorApp, rememberedFacts } from './quoted-data.ts';
import type { SpokenLanguages } from './spoken-languages.ts';
import { conversationTools, endOnFarewell, type ToolsOptions } from './tools.ts';
import type { TranscriptLog } from './transcripts.ts';

export interface ConversationAgentInput {
  metadata: ParsedDispatch;
  settings: ProviderSettings;
  providers: SessionProviders;
  languages: SpokenLanguages;
  transcripts: TranscriptLog;
  quality: TurnQuality;
  camera: CameraSampler | null;
  orders?: OrderTaker;
  reporter: Reporter<AgentEndedReport>;
  /** The job's own participant (client tools are its RPCs). */
  participant: ToolsOptions['participant'];
  /** The session the agent runs in (made after the agent). */
  session: () => voice.AgentSession;
  logger: AgentLogger;
}

export interface ConversationAgent {
  agent: IdentityAgent;
  /** The instructions it starts with. */
  instructions: string;
  /** Its instructions with the backend's context orders added to the start's context. */
  instructionsWith(added: readonly string[]): string;
  knowledge: KnowledgeTurns | null;
  /** A visitor's turn (spoken or typed) that takes leave: the goodbye, then the end; no reply. True when it was one. */
  endedOnFarewell(message: llm.ChatMessage): boolean;
}

export function conversationAgent(input: ConversationAgentInput): ConversationAgent {
  const { metadata, providers, languages, logger } = input;
  // Documents' passages and the visitor's app's notes reach the model as quoted data.
  const quotedData = Boolean(metadata.knowledge_url || metadata.client_control);
  // What is remembered of a returning visitor, quoted to every generation (memory.ts).
  const facts = metadata.memory?.facts ?? [];
  const remembered = facts.length > 0 ? [rememberedFacts(facts)] : [];
  const offlineModel = providers.names.llm === 'offline';
  // The offline model reads a turn's own instruction as part of its instructions, re-read each turn.
  const knowledgeRuleStanding = offlineModel && Boolean(metadata.knowledge_url);
  const instructionsFor = (context: string | null | undefined) =>
    agentInstructions({
      prompt: metadata.identity?.prompt ?? null,
      context,
      language: metadata.language,
      visualAwareness: modelSeesCamera(metadata.visual_awareness, providers.names.llm),
      quotedData,
      remembers: remembered.length > 0,
      standingKnowledgeRule: knowledgeRuleStanding,
    });
  const instructions = instructionsFor(metadata.context);
  const knowledge = metadata.knowledge_url
    ? new KnowledgeTurns({
        url: metadata.knowledge_url,
        reportToken: metadata.report_token,
        language: () => languages.speaking,
        logger,
        // The offline model reads a long prompt slowly: 2,400 characters of passages put its
        // first word ~7.5 s later (bench/knowledge); it gets the best passage, cut.
        maxChars: offlineModel ? OFFLINE_KNOWLEDGE_CHARS : undefined,
        standingRule: knowledgeRuleStanding,
      })
    : null;
  const toolsOptions = toolsOptionsFor(input);
  const tools = conversationTools(toolsOptions);
  // The offline model never called end_session for a goodbye: there, a farewell the rule tells ends the session.
  const endsOnFarewell = offlineModel ? metadata.tools?.find((tool) => tool.type === 'end_session') : undefined;
  const endedOnFarewell = (message: llm.ChatMessage): boolean => {
    if (!endsOnFarewell || !isFarewell(message.textContent ?? '')) return false;
    const session = input.session();
    // agents adds a visitor's turn to the conversation only with the reply it gets: added here
    // as it does (the history, then the event the transcript listens to), before the goodbye.
    session.history.insert(message);
    session.emit(voice.AgentSessionEventTypes.ConversationItemAdded, voice.createConversationItemAddedEvent(message));
    void endOnFarewell(session, endsOnFarewell, toolsOptions);
    return true;
  };
  const agent = new IdentityAgent(instructions, tools, {
    async beforeGeneration(chatCtx) {
      addQuotedData(chatCtx, 'visitor_memory', remembered);
      addQuotedData(chatCtx, 'visitor_notes', (input.orders?.visitorNotes() ?? []).map(fromVisitorApp));
      await knowledge?.addTo(chatCtx);
    },
    async beforeReply(chatCtx, message) {
      if (endedOnFarewell(message)) throw new voice.StopResponse();
      const followed = languages.follow();
      if (followed) {
        if (followed.switched) providers.speakIn(followed.language);
        chatCtx.addMessage({ role: 'system', content: followLanguageInstruction(followed.language) });
      }
      for (const image of (await input.camera?.takeFrames()) ?? []) {
        message.content.push(llm.createImageContent({ image, inferenceDetail: 'low' }));
      }
    },
  });
  return {
    agent,
    instructions,
    instructionsWith: (added) => instructionsFor([metadata.context, ...added].filter(Boolean).join('\n')),
    knowledge,
    endedOnFarewell,
  };
}

/** The session's tools as the conversation calls them: each call logged, transcribed and counted. */
function toolsOptionsFor(input: ConversationAgentInput): ToolsOptions {
  const { metadata, languages, logger } = input;
  return {
    tools: metadata.tools ?? [],
    toolCallsUrl: metadata.tool_calls_url,
    reportToken: metadata.report_token,
    visitorIdentity: metadata.visitor_identity,
    participant: input.participant,
    language: () => languages.speaking,
    onCall(call) {
      logger.info({ tool: call.name, outcome: call.outcome, duration_ms: call.duration_ms }, 'tool call');
      input.transcripts.recordToolCall(call);
      input.quality.toolCall(call);
    },
    async endSession() {
      logger.info('the agent ended the session (end_session tool)');
      if (!(await deliver(input.reporter, { type: 'agent_ended' }))) logger.warn('agent_ended could not be reported');
    },
    logger,
  };
}

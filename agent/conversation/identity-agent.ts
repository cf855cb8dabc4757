// The session's agent: the identity's instructions and tools, and the conversation's hooks
// around each turn (index.ts): before a visitor's turn is answered (the language switch, the
// camera's frames, a farewell that ends the session) and before every generation (quoted data).
import { type llm, voice } from '@livekit/agents';

export interface TurnHooks {
  /** May throw agents' StopResponse: the turn gets no reply. */
  beforeReply(chatCtx: llm.ChatContext, message: llm.ChatMessage): Promise<void>;
  /** Every generation's context, spoken or typed turns and tools' follow-ups alike (the passages: knowledge.ts). */
  beforeGeneration(chatCtx: llm.ChatContext): Promise<void>;
}

export class IdentityAgent extends voice.Agent {
  constructor(
    instructions: string,
    tools: Record<string, llm.FunctionTool>,
    private readonly turnHooks: TurnHooks,
  ) {
    super({ instructions, tools: Object.values(tools) });
  }

  override async onUserTurnCompleted(chatCtx: llm.ChatContext, newMessage: llm.ChatMessage): Promise<void> {
    await this.turnHooks.beforeReply(chatCtx, newMessage);
  }

  override async llmNode(
    chatCtx: llm.ChatContext,
    toolCtx: llm.ToolContext,
    modelSettings: voice.ModelSettings,
  ): ReturnType<voice.Agent['llmNode']> {
    await this.turnHooks.beforeGeneration(chatCtx);
    return super.llmNode(chatCtx, toolCtx, modelSettings);
  }
}

// Which language the conversation is in: pinned by the session, or in auto mode the one the
// visitor was last heard speaking, which the agent then follows from its next reply on.
import type { Language, SpokenLanguage } from '../../src/contract/index.ts';
import { isSpokenLanguage } from './instructions.ts';

/** One language normalised from whatever the STT reports ('es', 'es-ES', 'Spanish'…). */
export function spokenLanguageOf(reported: unknown): SpokenLanguage | null {
  if (typeof reported !== 'string') return null;
  const code = reported.toLowerCase().split(/[-_]/)[0];
  return isSpokenLanguage(code) ? code : null;
}

export class SpokenLanguages {
  /** The language the agent speaks now: pinned, or in auto mode the visitor's last detected one. */
  speaking: SpokenLanguage;
  /** The language the visitor was last heard in (null: not yet). */
  heard: SpokenLanguage | null = null;

  constructor(readonly mode: Language) {
    this.speaking = mode === 'auto' ? 'en' : mode;
  }

  /** A final transcript's reported language. */
  hear(reported: unknown): void {
    this.heard = spokenLanguageOf(reported) ?? this.heard;
  }

  /** The visitor's turn's language for the transcript: theirs in auto mode, else the pinned one. */
  visitorTurn(): SpokenLanguage | null {
    return this.mode === 'auto' ? this.heard : this.mode;
  }

  /**
   * In auto mode, before a reply: the language the visitor was heard in, which the agent now
   * speaks (`switched` when that is a change); null when nothing is to follow.
   */
  follow(): { language: SpokenLanguage; switched: boolean } | null {
    if (this.mode !== 'auto' || !this.heard) return null;
    const switched = this.heard !== this.speaking;
    this.speaking = this.heard;
    return { language: this.heard, switched };
  }
}

import { z } from 'zod';
import { inputError } from './input-errors.ts';
import { readJsonArray } from './json-array-reader.ts';
import { addStat, cyclePrefix, newStats, ReplayWorkload, SHAREGPT_SHUFFLE_STREAM, statsOut, type ReplayFeed, type ReplayNames, type ReplaySpec, type TokenStats } from './replay-source.ts';
import { replayOptions, type SourceContext } from './source-context.ts';
import { loadTokenCounter, type TokenCounter } from './token-counter.ts';
import { Rng } from '../rng.ts';

/** The reference's caps on one ShareGPT turn. */
export const SHAREGPT_MAX_CONTEXT_TOKENS = 16_384;
export const SHAREGPT_MAX_GENERATION_TOKENS = 2_048;

const MessageSchema = z.looseObject({ from: z.string({ error: '"from" must be a string' }), value: z.unknown() });
const ConversationSchema = z.looseObject({
  id: z.union([z.string(), z.number()], { error: '"id" must be a string or a number' }).optional(),
  conversations: z.array(MessageSchema, { error: '"conversations" must be an array of {from, value} messages' }),
});

export interface ShareGptConversation {
  id: string;
  /** Context tokens of each turn (the human message), capped. */
  contextTokens: number[];
  /** Generated tokens of each turn (the gpt reply), capped. */
  generationTokens: number[];
}

export interface ShareGptDataset {
  file: string;
  tokenizer: string;
  conversations: ShareGptConversation[];
  elementsRead: number;
  /** True when the file was read to its closing "]" (false: --max-conversations reached first). */
  fileReadFully: boolean;
  withoutTurns: number;
  turns: number;
  cappedContextTurns: number;
  cappedGenerationTurns: number;
  /** Messages from roles other than human and gpt (system, bing...): not part of a turn. */
  otherRoleMessages: number;
  /** human/gpt messages that form no (human, gpt) pair, so no turn: counted, not replayed. */
  unpairedMessages: number;
  context: TokenStats;
  generation: TokenStats;
}

export interface ShareGptLoadOptions {
  maxConversations: number;
  maxContextTokens?: number;
  maxGenerationTokens?: number;
  counter?: TokenCounter;
  charsPerToken?: number;
}

/**
 * Reads a ShareGPT JSON array, one conversation at a time (bounded memory, any file size), until
 * `maxConversations` conversations with at least one turn are loaded. A turn is a human message
 * directly followed by a gpt reply: context = the human text's tokens, generation = the reply's, capped
 * at 16,384 / 2,048 (the reference). Only token counts are kept, never the text.
 */
export async function loadShareGpt(file: string, opts: ShareGptLoadOptions): Promise<ShareGptDataset> {
  const counter = opts.counter ?? (await loadTokenCounter({ charsPerToken: opts.charsPerToken }));
  const maxCtx = opts.maxContextTokens ?? SHAREGPT_MAX_CONTEXT_TOKENS;
  const maxGen = opts.maxGenerationTokens ?? SHAREGPT_MAX_GENERATION_TOKENS;
  const ds: ShareGptDataset = {
    file,
    tokenizer: counter.name,
    conversations: [],
    elementsRead: 0,
    fileReadFully: false,
    withoutTurns: 0,
    turns: 0,
    cappedContextTurns: 0,
    cappedGenerationTurns: 0,
    otherRoleMessages: 0,
    unpairedMessages: 0,
    context: newStats(),
    generation: newStats(),
  };
  const ids = new Set<string>();
  const r = await readJsonArray(file, ({ value, index, lineNo }) => {
    ds.elementsRead++;
    const parsed = ConversationSchema.safeParse(value);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const where = first.path.length > 0 ? ` at ${first.path.join('.')}` : '';
      throw inputError(file, lineNo, `conversation ${index + 1} is not a ShareGPT conversation {id, conversations: [{from, value}]}${where}: ${first.message}`);
    }
    const msgs = parsed.data.conversations;
    const conv: ShareGptConversation = { id: '', contextTokens: [], generationTokens: [] };
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i];
      if (m.from !== 'human' && m.from !== 'gpt') {
        ds.otherRoleMessages++;
        continue;
      }
      if (typeof m.value !== 'string') {
        throw inputError(file, lineNo, `conversation ${index + 1}, message ${i + 1}: "value" must be a string`);
      }
      const reply = msgs[i + 1];
      if (m.from !== 'human' || !reply || reply.from !== 'gpt') {
        // A human message without a reply, or a reply without a question: no turn to replay.
        ds.unpairedMessages++;
        continue;
      }
      if (typeof reply.value !== 'string') {
        throw inputError(file, lineNo, `conversation ${index + 1}, message ${i + 2}: "value" must be a string`);
      }
      let ctx = countTokens(counter, m.value, file, lineNo, `conversation ${index + 1}, message ${i + 1}`);
      let gen = countTokens(counter, reply.value, file, lineNo, `conversation ${index + 1}, message ${i + 2}`);
      if (ctx > maxCtx) {
        ctx = maxCtx;
        ds.cappedContextTurns++;
      }
      if (gen > maxGen) {
        gen = maxGen;
        ds.cappedGenerationTurns++;
      }
      conv.contextTokens.push(ctx);
      conv.generationTokens.push(gen);
      addStat(ds.context, ctx);
      addStat(ds.generation, gen);
      i++; // the reply is used
    }
    if (conv.contextTokens.length === 0) {
      ds.withoutTurns++;
      return true;
    }
    // Unique IDs: a repeated id would make two conversations share cache keys.
    // A renamed id may itself be taken (a file can hold "a~2" besides two "a"s): count on until free.
    const base = parsed.data.id === undefined ? `conv_${index}` : String(parsed.data.id);
    let id = base;
    for (let k = index; ids.has(id); k++) id = `${base}~${k}`;
    ids.add(id);
    conv.id = id;
    ds.conversations.push(conv);
    ds.turns += conv.contextTokens.length;
    return ds.conversations.length < opts.maxConversations;
  });
  ds.fileReadFully = r.complete;
  if (ds.conversations.length === 0) {
    throw inputError(
      file,
      null,
      r.elements === 0 ? 'the JSON array is empty: no ShareGPT conversations' : `none of its ${r.elements} conversations has a turn (a "human" message followed by a "gpt" reply)`,
    );
  }
  return ds;
}

/**
 * A message's tokens. A tokenizer that throws on some text is a problem of that text for the user to
 * find (a VALIDATION error naming the file, conversation and message), not an internal failure.
 */
function countTokens(counter: TokenCounter, text: string, file: string, lineNo: number, where: string): number {
  try {
    return counter.count(text);
  } catch (err) {
    throw inputError(file, lineNo, `${where}: ${counter.name} could not count its text: ${(err as Error).message}`);
  }
}

export interface ShareGptReplayOptions {
  seed: number;
  numUsers: number;
  multiTurn: boolean;
  /** Requests per second; 0 = unpaced. */
  requestRate: number;
  /** Passes over the conversations; 0 = until the run ends. */
  replayCycles: number;
}

/**
 * Replays ShareGPT conversations turn by turn. The loaded conversations are shuffled (seeded, as the
 * reference shuffles them); conversation i belongs to user `dataset_user_{i % users}`, each user works
 * through its conversations in order, and the users take turns (round robin), so a conversation's next
 * turn comes about one round after the previous one; the request queue serves it only once that turn
 * has written its entry, so the multi-turn reload (every earlier turn of the conversation, in order)
 * really reads it. With multi-turn
 * off every request gets its own key and nothing is reloaded. Pacing: one request every 1/rate seconds,
 * or unpaced. Later cycles replay the same order under their own keys (`c{n}_` prefix).
 */
export class ShareGptFeed implements ReplayFeed {
  readonly #ds: ShareGptDataset;
  readonly #o: ShareGptReplayOptions;
  /** Conversation indices (into the dataset) per user, in replay order. */
  readonly #lanes: number[][];
  readonly #laneConv: Int32Array;
  readonly #laneTurn: Int32Array;
  readonly #laneSeen: Uint8Array;
  readonly #laneConvId: string[];
  #active: number[] = [];
  #cursor = 0;
  #cycle = 0;
  #cyclesCompleted = 0;
  #seq = 0;
  #usersSeen = 0;
  /** First turns among the requests offered so far (not merely pulled: the replay reads ahead). */
  #conversationsStarted = 0;
  readonly #firstTurns = new WeakSet<ReplaySpec>();
  #ended = false;

  constructor(ds: ShareGptDataset, opts: ShareGptReplayOptions) {
    this.#ds = ds;
    this.#o = opts;
    const order = ds.conversations.map((_, i) => i);
    const rng = new Rng(opts.seed, SHAREGPT_SHUFFLE_STREAM);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rng.next() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    const laneCount = Math.max(1, Math.min(opts.numUsers, order.length));
    this.#lanes = Array.from({ length: laneCount }, () => []);
    order.forEach((conv, i) => this.#lanes[i % laneCount].push(conv));
    this.#laneConv = new Int32Array(laneCount);
    this.#laneTurn = new Int32Array(laneCount);
    this.#laneSeen = new Uint8Array(laneCount);
    this.#laneConvId = new Array<string>(laneCount).fill('');
    this.#startCycle();
  }

  async pull(max: number): Promise<ReplaySpec[]> {
    const out: ReplaySpec[] = [];
    while (out.length < max && !this.#ended) out.push(this.#nextSpec());
    return out;
  }

  activeUsers(): number {
    return this.#usersSeen;
  }

  offered(spec: ReplaySpec): void {
    if (this.#firstTurns.has(spec)) this.#conversationsStarted++;
  }

  describe(): Record<string, unknown> {
    const ds = this.#ds;
    return {
      format: 'sharegpt-json',
      file: ds.file,
      tokenizer: ds.tokenizer,
      conversations_loaded: ds.conversations.length,
      conversations_without_turns: ds.withoutTurns,
      conversations_read: ds.elementsRead,
      file_read_fully: ds.fileReadFully,
      turns: ds.turns,
      other_role_messages: ds.otherRoleMessages,
      unpaired_messages: ds.unpairedMessages,
      capped_context_turns: ds.cappedContextTurns,
      capped_generation_turns: ds.cappedGenerationTurns,
      dataset_context_tokens: statsOut(ds.context),
      dataset_generation_tokens: statsOut(ds.generation),
      users: this.#lanes.length,
      multi_turn: this.#o.multiTurn,
      pacing: this.#o.requestRate > 0 ? { mode: 'request-rate', request_rate: this.#o.requestRate } : { mode: 'unpaced', request_rate: 0 },
      replay_cycles: this.#o.replayCycles,
      conversations_started: this.#conversationsStarted,
    };
  }

  #startCycle(): void {
    this.#laneConv.fill(0);
    this.#laneTurn.fill(0);
    this.#active = this.#lanes.map((_, i) => i).filter((i) => this.#lanes[i].length > 0);
    this.#cursor = 0;
  }

  #nextSpec(): ReplaySpec {
    const lane = this.#active[this.#cursor];
    const conv = this.#ds.conversations[this.#lanes[lane][this.#laneConv[lane]]];
    const t = this.#laneTurn[lane];
    const seq = this.#seq++;
    if (!this.#laneSeen[lane]) {
      this.#laneSeen[lane] = 1;
      this.#usersSeen++;
    }
    const arrivalNs = this.#o.requestRate > 0 ? Math.round((seq * 1e9) / this.#o.requestRate) : 0;
    // The conversation's id (the cycle prefix applied), built at its first turn and shared by the others.
    if (t === 0) this.#laneConvId[lane] = `${cyclePrefix(this.#cycle)}${conv.id}`;
    const conversationId = this.#o.multiTurn ? this.#laneConvId[lane] : null;
    const spec = new ShareGptSpec(arrivalNs, this.#cycle, lane, seq, conv.contextTokens[t], conv.generationTokens[t], conversationId, this.#o.multiTurn ? t + 1 : 1);
    if (t === 0) this.#firstTurns.add(spec);

    // Advance this user: next turn, next conversation, or done; then the next user's turn.
    if (t + 1 < conv.contextTokens.length) {
      this.#laneTurn[lane] = t + 1;
      this.#cursor++;
    } else {
      this.#laneTurn[lane] = 0;
      this.#laneConv[lane]++;
      if (this.#laneConv[lane] >= this.#lanes[lane].length) this.#active.splice(this.#cursor, 1);
      else this.#cursor++;
    }
    if (this.#cursor >= this.#active.length) this.#cursor = 0;
    if (this.#active.length === 0) {
      this.#cyclesCompleted++;
      if (this.#o.replayCycles > 0 && this.#cyclesCompleted >= this.#o.replayCycles) this.#ended = true;
      else {
        this.#cycle++;
        this.#startCycle();
      }
    }
    return spec;
  }
}

/**
 * A ShareGPT turn as replayed: user `dataset_user_{lane}`; its own entry is the conversation's turn
 * (multi-turn) or a key of its own (`[c{n}_]dataset_user_{lane}_req_{seq}`).
 */
class ShareGptSpec implements ReplaySpec {
  readonly arrivalNs: number;
  readonly cycle: number;
  readonly userIndex: number;
  readonly #seq: number;
  readonly contextTokens: number;
  readonly generationTokens: number;
  readonly conversationId: string | null;
  readonly turn: number;

  constructor(arrivalNs: number, cycle: number, lane: number, seq: number, contextTokens: number, generationTokens: number, conversationId: string | null, turn: number) {
    this.arrivalNs = arrivalNs;
    this.cycle = cycle;
    this.userIndex = lane;
    this.#seq = seq;
    this.contextTokens = contextTokens;
    this.generationTokens = generationTokens;
    this.conversationId = conversationId;
    this.turn = turn;
  }

  get prefixBlockCount(): number {
    return 0;
  }

  names(): ReplayNames {
    const userId = `dataset_user_${this.userIndex}`;
    const seq = String(this.#seq).padStart(6, '0');
    return {
      userId,
      requestId: `req_${userId}_${seq}`,
      cacheKey: this.conversationId !== null ? `${this.conversationId}_turn_${this.turn}` : `${cyclePrefix(this.cycle)}${userId}_req_${seq}`,
      prefixBlocks: null,
    };
  }
}

/** ShareGPT replay (`--dataset-path` with a JSON array). */
export async function createShareGptSource(ctx: SourceContext, file: string): Promise<ReplayWorkload> {
  const o = ctx.options;
  const tuning = o.tuning.sharegpt ?? {};
  const ds = await loadShareGpt(file, {
    maxConversations: o.maxConversations,
    maxContextTokens: tuning.max_context_tokens,
    maxGenerationTokens: tuning.max_generation_tokens,
    charsPerToken: tuning.chars_per_token_estimate,
  });
  ctx.log('info', `ShareGPT: ${ds.conversations.length} conversations, ${ds.turns} turns (tokens counted by ${ds.tokenizer})`);
  const feed = new ShareGptFeed(ds, {
    seed: ctx.seed,
    numUsers: o.numUsers,
    multiTurn: !o.disableMultiTurn,
    requestRate: o.requestRate,
    replayCycles: o.replayCycles,
  });
  return ReplayWorkload.start(feed, replayOptions(ctx, 'sharegpt', o.requestRate > 0, true));
}

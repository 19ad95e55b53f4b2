import { Rng } from '../workload/rng.ts';

/**
 * Completed requests whose raw latencies the results' reference lists keep (`end_to_end_latencies`,
 * `storage_latencies`, `generation_latencies`, `prefill_latencies`, `decode_latencies`). Past this many
 * the lists are a uniform random sample of the window's requests, in completion order. kvbench reads
 * every percentile from its HDR histograms, which count every request; the lists exist for the
 * reference's tools. Unbounded, a run completing a million requests held 40 MB of doubles and wrote
 * about 90 MB of JSON into every stored trial; at this cap the lists are at most ~5 MB of JSON.
 */
export const RAW_LATENCY_SAMPLE_REQUESTS = 50_000;

/** The five lists, in seconds, in completion order. */
export interface RawLatencyLists {
  endToEndS: number[];
  storageS: number[];
  generationS: number[];
  prefillS: number[];
  decodeS: number[];
}

/** What the results say about the lists: how many requests they cover of how many completed. */
export interface RawLatencySampleFacts {
  cap_requests: number;
  requests_completed: number;
  requests_kept: number;
  /** True when the lists are a sample (more requests completed than the cap). */
  sampled: boolean;
}

/**
 * A reservoir (Algorithm R) of completed requests: all of them up to the cap, then each later one
 * replaces a kept one with probability cap ÷ seen, so every request is equally likely to be kept. A
 * request's five latencies are kept or dropped together, so the three lists every request has stay
 * parallel (index i is the same request in each).
 */
export class RawLatencySample {
  readonly #capRequests: number;
  readonly #rng = new Rng(0x6b76, 0);
  #seen = 0;
  /** Completion ordinal of the request in each slot (the lists are in completion order). */
  #ordinal: number[] = [];
  #endToEndS: number[] = [];
  #storageS: number[] = [];
  #generationS: number[] = [];
  /** NaN: the request wrote no prefill entry / ran no decode step. */
  #prefillS: number[] = [];
  #decodeS: number[] = [];

  constructor(capRequests = RAW_LATENCY_SAMPLE_REQUESTS) {
    this.#capRequests = capRequests;
  }

  add(endToEndS: number, storageS: number, generationS: number, prefillS: number | null, decodeS: number | null): void {
    const ordinal = this.#seen++;
    let slot = this.#ordinal.length;
    if (slot >= this.#capRequests) {
      slot = Math.floor(this.#rng.next() * this.#seen);
      if (slot >= this.#capRequests) return;
    }
    this.#ordinal[slot] = ordinal;
    this.#endToEndS[slot] = endToEndS;
    this.#storageS[slot] = storageS;
    this.#generationS[slot] = generationS;
    this.#prefillS[slot] = prefillS ?? Number.NaN;
    this.#decodeS[slot] = decodeS ?? Number.NaN;
  }

  reset(): void {
    this.#seen = 0;
    for (const list of [this.#ordinal, this.#endToEndS, this.#storageS, this.#generationS, this.#prefillS, this.#decodeS]) list.length = 0;
  }

  lists(): RawLatencyLists {
    const slots = this.#ordinal.map((_, slot) => slot);
    // Replacements leave the slots out of completion order once sampling began.
    if (this.#seen > this.#capRequests) slots.sort((a, b) => this.#ordinal[a] - this.#ordinal[b]);
    const present = (list: number[]): number[] => slots.map((s) => list[s]).filter((v) => !Number.isNaN(v));
    return {
      endToEndS: slots.map((s) => this.#endToEndS[s]),
      storageS: slots.map((s) => this.#storageS[s]),
      generationS: slots.map((s) => this.#generationS[s]),
      prefillS: present(this.#prefillS),
      decodeS: present(this.#decodeS),
    };
  }

  facts(): RawLatencySampleFacts {
    return { cap_requests: this.#capRequests, requests_completed: this.#seen, requests_kept: this.#ordinal.length, sampled: this.#seen > this.#capRequests };
  }
}

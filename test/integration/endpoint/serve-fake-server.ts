// The simulated OpenAI-compatible server the endpoint tests use, started by hand so the endpoint
// workflow in docs/endpoint.md can be tried without a GPU or a serving engine:
//   node_modules/.bin/node test/integration/endpoint/serve-fake-server.ts [vllm|sglang|trtllm] [HOST_BLOCKS]
// It prints its URL and serves until interrupted.
import { startFakeServer, type Flavor } from './fake-openai-server.ts';

const FLAVORS: readonly Flavor[] = ['vllm', 'sglang', 'trtllm'];
const flavor = (process.argv[2] ?? 'vllm') as Flavor;
const hostBlocks = Number(process.argv[3] ?? 4096);
if (!FLAVORS.includes(flavor) || !Number.isInteger(hostBlocks) || hostBlocks < 0) {
  process.stderr.write('usage: serve-fake-server.ts [vllm|sglang|trtllm] [HOST_BLOCKS]\n');
  process.exit(1);
}
const server = await startFakeServer({ flavor, model: 'fake-model', gpuBlocks: 2048, hostBlocks, prefillMsPerToken: 0.01, reloadMsPerToken: 0.002, decodeMsPerToken: 1 });
process.stdout.write(`simulated ${flavor} server (model fake-model) at ${server.url}; Ctrl-C stops it\n`);
process.on('SIGINT', () => void server.close().then(() => process.exit(0)));

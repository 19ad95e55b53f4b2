import { describe, expect, it } from 'vitest';
import { counterValue, familySamples, gaugeValue, parsePrometheusText, parseSampleLine, seriesKey } from '../../../src-main/endpoint/prometheus-text.ts';

describe('Prometheus text format', () => {
  it('reads HELP, TYPE, comments, labels and values as vLLM serves them', () => {
    const page = parsePrometheusText(
      [
        '# HELP vllm:prefix_cache_hits Prefix cache hits, in terms of number of cached tokens.',
        '# TYPE vllm:prefix_cache_hits counter',
        'vllm:prefix_cache_hits_total{engine="0",model_name="meta-llama/Llama-3.1-8B"} 1024.0',
        '# a free comment',
        '',
        '# TYPE vllm:kv_cache_usage_perc gauge',
        'vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25',
      ].join('\n'),
    );
    expect(page.errors).toEqual([]);
    expect(page.types.get('vllm:prefix_cache_hits')).toBe('counter');
    expect(page.help.get('vllm:prefix_cache_hits')).toMatch(/number of cached tokens/);
    expect(page.samples).toEqual([
      { name: 'vllm:prefix_cache_hits_total', labels: { engine: '0', model_name: 'meta-llama/Llama-3.1-8B' }, value: 1024, timestampMs: null },
      { name: 'vllm:kv_cache_usage_perc', labels: { engine: '0', model_name: 'm' }, value: 0.25, timestampMs: null },
    ]);
  });

  it('unescapes label values and accepts spaces, a trailing comma and timestamps', () => {
    const s = parseSampleLine('x_total { path="C:\\\\dir", msg="say \\"hi\\"\\nbye", } 7 1712345678901');
    expect(s).toEqual({ name: 'x_total', labels: { path: 'C:\\dir', msg: 'say "hi"\nbye' }, value: 7, timestampMs: 1712345678901 });
    expect(parseSampleLine('y{a="}{,="} 1').labels).toEqual({ a: '}{,=' });
  });

  it('reads NaN, ±Inf, exponents and OpenMetrics exemplars', () => {
    expect(parseSampleLine('a NaN').value).toBeNaN();
    expect(parseSampleLine('a +Inf').value).toBe(Number.POSITIVE_INFINITY);
    expect(parseSampleLine('a -Inf').value).toBe(Number.NEGATIVE_INFINITY);
    expect(parseSampleLine('a 8.128902e+06').value).toBe(8128902);
    expect(parseSampleLine('h_bucket{le="0.5"} 3 # {trace_id="abc"} 0.4 1.7e9').value).toBe(3);
  });

  it('reads Prometheus 3 quoted metric names', () => {
    expect(parseSampleLine('{"my.metric", a="1"} 2')).toEqual({ name: 'my.metric', labels: { a: '1' }, value: 2, timestampMs: null });
  });

  it('reports bad lines with their line number and keeps the rest', () => {
    const page = parsePrometheusText('good 1\nbad{a=1} 2\nworse\n{a="1"} 3\nfine 4\n# EOF\n');
    expect(page.samples.map((s) => s.name)).toEqual(['good', 'fine']);
    expect(page.errors.map((e) => e.line)).toEqual([2, 3, 4]);
    expect(page.errors[0].message).toMatch(/quoted value/);
  });

  it('finds a family under x_total or x, never both, and filters labels case-insensitively', () => {
    const page = parsePrometheusText(
      [
        'vllm:kv_offload_total_bytes_total{transfer_type="GPU_to_CPU",engine="0"} 100',
        'vllm:kv_offload_total_bytes_total{transfer_type="CPU_to_GPU",engine="0"} 40',
        'vllm:kv_offload_total_bytes_total{transfer_type="CPU_to_GPU",engine="1"} 2',
        'vllm:kv_offload_total_bytes_created{transfer_type="CPU_to_GPU",engine="1"} 1.7e9',
        'old_counter 5',
        'vllm:kv_cache_usage_perc{engine="0"} 0.2',
        'vllm:kv_cache_usage_perc{engine="1"} 0.4',
      ].join('\n'),
    );
    expect(counterValue(page, 'vllm:kv_offload_total_bytes')).toBe(142);
    expect(counterValue(page, 'vllm:kv_offload_total_bytes', { transfer_type: 'cpu_to_gpu' })).toBe(42);
    expect(counterValue(page, 'vllm:kv_offload_total_bytes_total', { transfer_type: 'GPU_to_CPU' })).toBe(100);
    expect(counterValue(page, 'old_counter')).toBe(5);
    expect(counterValue(page, 'missing')).toBeNull();
    expect(familySamples(page, 'vllm:kv_offload_total_bytes')).toHaveLength(3);
    expect(gaugeValue(page, 'vllm:kv_cache_usage_perc')).toBeCloseTo(0.3, 12);
  });

  it('keys a series by its name and sorted labels', () => {
    expect(seriesKey({ name: 'a', labels: { z: '1', b: 'x"y' } })).toBe('a{b="x\\"y",z="1"}');
    expect(seriesKey({ name: 'a', labels: {} })).toBe('a');
  });
});

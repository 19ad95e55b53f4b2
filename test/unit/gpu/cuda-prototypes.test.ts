// The koffi prototypes kvbench binds, held against cuda.h's declarations of the same symbols. A
// prototype that disagrees with the driver's ABI (an int where cuda.h has a size_t, a 32-bit device
// pointer, a missing stream argument) can still pass every test on the stub libcuda, which is built
// from this project's own signatures; here each parameter's ABI class is compared with the NVIDIA
// header's, symbol by symbol. The declarations below are copied from cuda.h (CUDA 12/13).

import { describe, expect, it } from 'vitest';
import { CUDA_DRIVER_PROTOTYPES } from '../../../src-main/engine/tiers/gpu/koffi-cuda-driver.ts';

const CUDA_H = `
CUresult cuInit(unsigned int Flags);
CUresult cuDriverGetVersion(int *driverVersion);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
CUresult cuDevicePrimaryCtxRelease(CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxSynchronize(void);
CUresult cuMemGetInfo_v2(size_t *free, size_t *total);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags);
CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags);
CUresult cuMemHostUnregister(void *p);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream);
CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream);
CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags);
CUresult cuStreamSynchronize(CUstream hStream);
CUresult cuStreamDestroy_v2(CUstream hStream);
CUresult cuStreamDestroy(CUstream hStream);
CUresult cuGetErrorName(CUresult error, const char **pStr);
`;

/** How a value of this C type is passed on x86-64 and arm64 Linux: what must agree for the call to work. */
function abiClass(type: string): string {
  const t = type.replace(/\b(const|_Out_|_Inout_|_In_)\b/g, ' ').replace(/\s+/g, ' ').trim();
  if (t.endsWith('*')) return 'pointer';
  const classes: Record<string, string> = {
    int: 'int32',
    'unsigned int': 'uint32',
    CUresult: 'int32', // an enum
    CUdevice: 'int32',
    size_t: 'uint64',
    uint64_t: 'uint64',
    'unsigned long long': 'uint64',
    CUdeviceptr: 'uint64', // unsigned long long on 64-bit hosts
    CUcontext: 'pointer',
    CUstream: 'pointer',
    'void *': 'pointer',
  };
  const c = classes[t];
  if (c === undefined) throw new Error(`no ABI class for C type "${type}"`);
  return c;
}

interface Signature {
  ret: string;
  name: string;
  params: string[];
}

/** "int f(const void *src, size_t n)" → { ret, name, params: ABI classes }. */
function parse(decl: string): Signature {
  const m = /^\s*([\w ]+?)\s+(\w+)\s*\((.*)\)\s*;?\s*$/.exec(decl);
  if (!m) throw new Error(`cannot parse "${decl}"`);
  const params = m[3].trim() === 'void' || m[3].trim() === '' ? [] : m[3].split(',').map((p) => {
    // Every parameter here is named: its type is what comes before the last identifier.
    return abiClass(p.trim().replace(/\w+$/, '').replace(/\s*\*/g, ' *'));
  });
  return { ret: abiClass(m[1]), name: m[2], params };
}

const header = new Map(
  CUDA_H.split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const s = parse(l);
      return [s.name, s] as const;
    }),
);

describe('the koffi prototypes against cuda.h', () => {
  const bound = Object.entries(CUDA_DRIVER_PROTOTYPES).flatMap(([fn, protos]) => protos.map((p) => [fn, p] as const));

  it.each(bound)('%s: %s', (_fn, proto) => {
    const ours = parse(proto);
    const theirs = header.get(ours.name);
    expect(theirs, `${ours.name} is not a cuda.h symbol kvbench knows the declaration of`).toBeDefined();
    expect(ours).toEqual(theirs);
  });

  it('binds the versioned symbol first wherever cuda.h maps the plain name to one', () => {
    for (const [fn, protos] of Object.entries(CUDA_DRIVER_PROTOTYPES)) {
      const first = parse(protos[0]).name;
      if (header.has(`${fn}_v2`)) expect(first, fn).toBe(`${fn}_v2`);
    }
  });

  it('tells the ABI classes apart (a size_t declared int would be caught)', () => {
    expect(parse('int f(void *p, int n)')).not.toEqual(parse('CUresult f(void *p, size_t n)'));
    expect(parse('int f(uint64_t d)')).not.toEqual(parse('CUresult f(CUstream s)'));
    expect(parse('int f(_Out_ const char **name)')).toEqual(parse('CUresult f(const char **pStr)'));
  });
});

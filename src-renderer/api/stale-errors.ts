// An error that says the server could not be reached is only true until it can be again: a notice
// that keeps saying "Is kvbench serve still running?" after the page reconnected misleads.
import { onBeforeUnmount, onMounted, type Ref } from 'vue';
import type { IpcError } from '../../src-shared/ipc/contract.ts';
import { api } from './api.ts';

/** Clears `error` (from a component's setup) when it is UNREACHABLE and the event stream has connected again. */
export function clearWhenReconnected(error: Ref<IpcError | null>): void {
  let off: (() => void) | undefined;
  onMounted(() => {
    off = api().onConnection((state) => {
      if (state === 'connected' && error.value?.code === 'UNREACHABLE') error.value = null;
    });
  });
  onBeforeUnmount(() => off?.());
}

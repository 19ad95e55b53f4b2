// Mounting for the renderer's component tests: each test starts with a fresh Pinia and an empty
// body, and every component it mounted is unmounted after it (a leftover one would answer the next
// test's events and queries).
import { mount, type VueWrapper } from '@vue/test-utils';
import { createPinia, setActivePinia } from 'pinia';
import { afterEach, beforeEach } from 'vitest';

export function mountPerTest(): (component: unknown, props?: Record<string, unknown>) => VueWrapper {
  const wrappers: VueWrapper[] = [];
  beforeEach(() => {
    setActivePinia(createPinia());
    document.body.innerHTML = '';
  });
  afterEach(() => {
    for (const w of wrappers.splice(0)) w.unmount();
  });
  return (component, props = {}) => {
    const w = mount(component as never, { attachTo: document.body, props } as never);
    wrappers.push(w);
    return w;
  };
}

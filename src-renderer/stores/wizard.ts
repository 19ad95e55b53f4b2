// The guided suite's wizard: its step, the hardware of the cache directory, and the plan form with
// the plan made from it. The run itself, once started, is the live-run store's.
import { labelTextProblem } from '../../src-shared/domain/label-text.ts';
import { defineStore } from 'pinia';
import { computed, reactive, ref, shallowRef } from 'vue';
import type { HardwareProfile } from '../../src-shared/domain/hardware.ts';
import type { SuitePlan } from '../../src-shared/domain/scenarios.ts';
import type { Advice, IpcError, PlanRequest } from '../../src-shared/ipc/contract.ts';
import { api } from '../api/api.ts';
import { parseNumberField, planRequestOf, type NumberField, type PlanForm } from '../plan-form.ts';

export type WizardStep = 'hardware' | 'plan' | 'run' | 'report';

export const useWizardStore = defineStore('wizard', () => {
  const step = ref<WizardStep>('hardware');

  // Hardware
  const cacheDir = ref('');
  const hardware = shallowRef<HardwareProfile | null>(null);
  const advice = ref<Advice[]>([]);
  const hardwareLoading = ref(false);
  const hardwareError = ref<IpcError | null>(null);
  /** The directory (as typed, trimmed) the hardware on screen was detected for. */
  const detectedDir = ref<string | null>(null);
  let detectSeq = 0;
  /** The field no longer names the directory the profile on screen describes. */
  const hardwareStale = computed(() => hardware.value !== null && cacheDir.value.trim() !== detectedDir.value);
  /**
   * Only a detection of the directory in the field, without blocking advice, may lead on to the plan:
   * a failed detection clears the last one, and an edited field makes it stale.
   */
  const hardwareUsable = computed(() => hardware.value !== null && !hardwareStale.value && hardwareError.value === null && !advice.value.some((a) => a.level === 'error'));

  // Plan
  const form = reactive<PlanForm>({
    profile: 'quick',
    trials: 3,
    durationS: null,
    warmUpS: 0,
    maxRequests: 0,
    model: '',
    scenarios: null,
    extras: false,
    probe: true,
    storageCapacityGib: null,
    label: '',
  });
  const plan = shallowRef<SuitePlan | null>(null);
  const planLoading = ref(false);
  const planError = ref<IpcError | null>(null);
  /** The request the plan on screen was made with: Start sends exactly this. */
  const plannedRequest = shallowRef<PlanRequest | null>(null);
  let planSeq = 0;
  /** Number fields whose text cannot be planned: the text as typed (shown again) and why. The form keeps its last valid value. */
  const fieldProblems = reactive<Partial<Record<NumberField, { text: string; message: string }>>>({});
  /** What keeps the form from being planned, said in the form rather than by the backend's validator. */
  /** Why the Label as typed cannot be stored, by the backend's own check (it is stored trimmed), or null: said under the field, not planned. */
  const labelProblem = computed(() => labelTextProblem('Label', form.label.trim()));
  const formProblems = computed(() => [
    ...Object.values(fieldProblems).map((p) => p.message),
    ...(labelProblem.value === null ? [] : [labelProblem.value]),
    ...(cacheDir.value.trim() ? [] : ['Enter the cache directory.']),
  ]);

  /**
   * The plan on screen is what the form says now: no change waits to be planned and the last
   * re-plan did not fail. Only such a plan can be started.
   */
  const planCurrent = computed(
    () =>
      plan.value !== null &&
      plannedRequest.value !== null &&
      planError.value === null &&
      !planLoading.value &&
      formProblems.value.length === 0 &&
      JSON.stringify(plannedRequest.value) === JSON.stringify(planRequest()),
  );

  /**
   * Sets a number field from its text. Returns the text the field should show (the value as planned:
   * "" for the warm-up is 0; 0 requests per trial, off, is ""), or null when the text cannot be planned and stays as typed, with its problem.
   */
  function setNumberField(field: NumberField, text: string, badInput = false): string | null {
    const r = parseNumberField(field, text, badInput);
    if ('problem' in r) {
      fieldProblems[field] = { text, message: r.problem };
      return null;
    }
    delete fieldProblems[field];
    if (field === 'trials' || field === 'warmUpS' || field === 'maxRequests') form[field] = r.value ?? 0;
    else form[field] = r.value;
    return numberFieldText(field);
  }

  /** What a number field shows: the text that cannot be planned, else the form's value. */
  function numberFieldText(field: NumberField): string {
    const v = fieldProblems[field]?.text ?? form[field];
    // Off is shown as an empty field (its placeholder says "off"), not as a count of 0 requests.
    return v === null || (field === 'maxRequests' && v === 0) ? '' : String(v);
  }

  function planRequest(): PlanRequest {
    return planRequestOf(cacheDir.value, form);
  }

  async function detect(dir?: string): Promise<void> {
    if (dir !== undefined) cacheDir.value = dir;
    const seq = ++detectSeq;
    const wanted = cacheDir.value.trim();
    if (!wanted) {
      clearHardware({ code: 'VALIDATION', message: 'Enter the directory the storage tier will write to.' });
      hardwareLoading.value = false;
      return;
    }
    hardwareLoading.value = true;
    hardwareError.value = null;
    const r = await api().call('hardware.detect', { cacheDir: wanted });
    if (seq !== detectSeq) return; // a newer detection is on its way
    hardwareLoading.value = false;
    if (r.ok) {
      hardware.value = r.value.hardware;
      advice.value = r.value.advice;
      detectedDir.value = wanted;
    } else {
      clearHardware(r.error);
    }
  }

  /** What the last detection found describes another directory: it must not stay on screen as this one's. */
  function clearHardware(error: IpcError): void {
    hardware.value = null;
    advice.value = [];
    detectedDir.value = null;
    hardwareError.value = error;
  }

  async function replan(): Promise<void> {
    const seq = ++planSeq;
    // The form says what is wrong next to its fields; the plan on screen is then not current.
    if (formProblems.value.length > 0) {
      planLoading.value = false;
      return;
    }
    const request = planRequest();
    planLoading.value = true;
    const r = await api().call('suite.plan', request);
    if (seq !== planSeq) return; // a newer request is on its way
    planLoading.value = false;
    if (r.ok) {
      plan.value = r.value.plan;
      plannedRequest.value = request;
      planError.value = null;
    } else {
      planError.value = r.error;
    }
  }

  return {
    step,
    cacheDir,
    hardware,
    advice,
    hardwareLoading,
    hardwareError,
    detectedDir,
    hardwareStale,
    hardwareUsable,
    form,
    plan,
    planLoading,
    planError,
    plannedRequest,
    planCurrent,
    fieldProblems,
    labelProblem,
    formProblems,
    setNumberField,
    numberFieldText,
    planRequest,
    detect,
    replan,
  };
});

// The one report model every output is drawn from (terminal tables, CSV, XLSX, JSON, the app's
// charts), in three parts that share only types and the trial cautions: the scenario report
// (scenario-report.ts), the tier comparison (tier-comparison.ts) and the comparison of two systems
// or drives (system-comparison.ts). Readers import from here.
export { PER_TRIAL_METHOD, POOLED_METHOD, REPORT_METHOD, FLAGGED_EXCLUDED_METHOD, pooledLatency, cautionsOf, ramBackingText, trialFlags, buildScenarioReport, metricOf } from './scenario-report.ts';
export type { ExcludedTrial, TrialCaution, TrialFlag, MetricAggregate, PooledLatency, ScenarioSummary, ScenarioReport } from './scenario-report.ts';
export { StatedBandwidthRefused, probeLimitsOf, buildTierComparison, efficiencyBasisText, gpuCopySourceText, limitsSourceText, memoryCopySourceText } from './tier-comparison.ts';
export type { TierRow, LimitOrigin, ProbeLimits, TierComparison, HardwareSource, StatedBandwidth } from './tier-comparison.ts';
export { COMPARISON_METRICS, metricVerdict, ComparisonRefused, COMPARISON_METHOD, buildSystemComparison } from './system-comparison.ts';
export type { Side, ConfigComparison, MetricComparison, SideCautions, GroupComparison, SystemComparison, MetricVerdict } from './system-comparison.ts';

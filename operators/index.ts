export { mapRunLifecycle, type MapRunLifecycleOptions } from './mapRunLifecycle.js';
export { openMessageStartContentEnd, type OpenMessageStartContentEndOptions } from './openMessageStartContentEnd.js';
export { stateDelta, type StateDeltaOptions } from './stateDelta.js';
export { toAgui, type ToAguiOptions } from './toAgui.js';
export { toolCallCorrelator, type ToolCallCorrelatorOptions } from './toolCallCorrelator.js';

/**
 * The slice form's values (what people type: Mbit/s, ms, %), their validation and their
 * conversion to the API's bodies (bit/s, seconds, ratios).
 *
 * The rules mirror the API's, field by field (`api/schemas/slices.py` for single fields,
 * `services/slices._check_rules` for rules across fields), and errors are keyed by the API's
 * field names, so the API's own 422 errors land on the same inputs. A unit test checks these
 * limits against the OpenAPI document; those of the data plane come from its generated constants.
 */
import {
  ABC_MEMORY_MAX_US,
  ABC_REFERENCE_RATE_MIN_BPS,
  BURST_LIMIT_MAX_NS,
  MAX_PRIORITY,
  RATE_MAX_BPS,
  RATE_MIN_BPS,
  VLAN_ID_MAX,
  VLAN_ID_MIN,
} from '@/config/p4-constants';
import type {
  AbcKey,
  AbcParameters,
  CodelParameters,
  QueueScheme,
  SliceCreate,
  SliceDocument,
  SlicePublic,
  SliceUpdate,
} from '@/lib/api/schema';
import { checkPrefix, splitPrefixes } from '@/lib/ipv4';
import { MBIT, MS, inputText, parseDecimal } from '@/lib/units';

export const LIMITS = {
  nameMaxLength: 64,
  namePattern: /^[A-Za-z0-9][A-Za-z0-9 _.:/@+-]*$/,
  descriptionMaxLength: 2000,
  vlanMin: VLAN_ID_MIN,
  vlanMax: VLAN_ID_MAX,
  prefixesMax: 64,
  secondsMax: 3600,
  /** The rates the data plane polices, bit/s. */
  rateMin: RATE_MIN_BPS,
  rateMax: RATE_MAX_BPS,
  /** The longest burst limit and marking threshold the data plane holds, seconds. */
  burstLimitMax: BURST_LIMIT_MAX_NS / 1e9,
  /** 0 is best effort's (unclassified traffic): slices use 1 to 7. */
  priorityMin: 1,
  priorityMax: MAX_PRIORITY,
  packetMin: 64,
  packetMax: 65535,
  linksMin: 1,
  linksMax: 64,
  /** CoDel's shortest interval, seconds (`domain/codel.py` INTERVAL_MIN_S). */
  codelIntervalMin: 0.001,
  /** ABC's memories (meter and average), seconds (`domain/abc.py` MEMORY_MIN_S, MEMORY_MAX_S). */
  abcMemoryMin: 0.001,
  abcMemoryMax: ABC_MEMORY_MAX_US / 1e6,
  /** ABC's reference rate R_r, bit/s. */
  abcReferenceRateMin: ABC_REFERENCE_RATE_MIN_BPS,
  abcReferenceRateMax: RATE_MAX_BPS,
} as const;

/** CoDel's defaults (RFC 8289's 5 ms target and 100 ms interval), as typed in the form. */
export const CODEL_DEFAULTS = { targetMs: '5', intervalMs: '100', ecnMark: false } as const;

/** ABC's defaults that do not depend on the slice (the paper's memories of 3 s and 0.3 s, a
 * reference rate of 10 kbit/s, one aggregate per source address), as typed in the form. The
 * thresholds' defaults depend on the slice's rate and burst limit (`abcThresholdDefaults`). */
export const ABC_DEFAULTS = {
  meterMemoryS: '3',
  averageMemoryS: '0.3',
  referenceRateKbps: '10',
  key: 'source_address' as AbcKey,
} as const;

/** The paper's Q_min, Q_base and gamma, in full-size (1,500-byte) packets at the slice rate. */
export const ABC_PAPER_PACKETS = { qMin: 6, qBase: 20, gamma: 16 } as const;

/** ABC's thresholds where the operator gives none, seconds, as the API resolves them
 * (`AbcConfig.with_paper_thresholds`): 6, 20 and 16 full-size packets' time at the slice's
 * rate, Q_min and Q_base at most the burst limit; a Q_min given without Q_base raises Q_base's
 * default to it, a Q_base given without Q_min lowers Q_min's. */
export function abcThresholdDefaults(
  rateBps: number,
  burstLimitS: number,
  given: { qMin?: number | null; qBase?: number | null } = {},
): { qMin: number; qBase: number; gamma: number } {
  const packet = (1500 * 8) / rateBps;
  let qMin = Math.min(ABC_PAPER_PACKETS.qMin * packet, burstLimitS);
  let qBase = Math.min(ABC_PAPER_PACKETS.qBase * packet, burstLimitS);
  if (given.qMin != null && given.qBase == null) qBase = Math.max(qBase, given.qMin);
  if (given.qBase != null && given.qMin == null) qMin = Math.min(qMin, given.qBase);
  return { qMin, qBase, gamma: ABC_PAPER_PACKETS.gamma * packet };
}

export interface SliceFormValues {
  name: string;
  description: string;
  vlanId: string;
  prefixes: string;
  rateMbps: string;
  burstLimitMs: string;
  delayTargetMs: string;
  e2eDelayTargetMs: string;
  priority: string;
  scheme: QueueScheme;
  markingThresholdMs: string;
  codelTargetMs: string;
  codelIntervalMs: string;
  codelEcnMark: boolean;
  abcMeterMemoryS: string;
  abcAverageMemoryS: string;
  abcReferenceRateKbps: string;
  /** Empty: the default at the slice's rate and burst limit. */
  abcQMinMs: string;
  abcQBaseMs: string;
  abcGammaMs: string;
  abcKey: AbcKey;
  abcPrefixLength: string;
  maxPacketBytes: string;
  slaMaxDelayMs: string;
  slaMinThroughputMbps: string;
  slaMaxLossPercent: string;
  slaMaxMarkPercent: string;
  linkIds: number[];
}

export type SliceFormErrors = Partial<Record<string, string>>;

export const EMPTY_VALUES: SliceFormValues = {
  name: '',
  description: '',
  vlanId: '',
  prefixes: '',
  rateMbps: '',
  burstLimitMs: '',
  delayTargetMs: '',
  e2eDelayTargetMs: '',
  priority: '7',
  scheme: 'tail_drop',
  markingThresholdMs: '',
  codelTargetMs: CODEL_DEFAULTS.targetMs,
  codelIntervalMs: CODEL_DEFAULTS.intervalMs,
  codelEcnMark: CODEL_DEFAULTS.ecnMark,
  abcMeterMemoryS: ABC_DEFAULTS.meterMemoryS,
  abcAverageMemoryS: ABC_DEFAULTS.averageMemoryS,
  abcReferenceRateKbps: ABC_DEFAULTS.referenceRateKbps,
  abcQMinMs: '',
  abcQBaseMs: '',
  abcGammaMs: '',
  abcKey: ABC_DEFAULTS.key,
  abcPrefixLength: '',
  maxPacketBytes: '',
  slaMaxDelayMs: '',
  slaMinThroughputMbps: '',
  slaMaxLossPercent: '',
  slaMaxMarkPercent: '',
  linkIds: [],
};

export function valuesFromSlice(slice: SlicePublic): SliceFormValues {
  const scaled = (value: number | null | undefined, factor: number) =>
    value === null || value === undefined ? '' : inputText(value / factor);
  return {
    name: slice.name,
    description: slice.description,
    vlanId: slice.vlan_id === null ? '' : String(slice.vlan_id),
    prefixes: slice.ipv4_prefixes.join('\n'),
    rateMbps: scaled(slice.rate_bps, MBIT),
    burstLimitMs: scaled(slice.burst_limit_s, MS),
    delayTargetMs: scaled(slice.delay_target_s, MS),
    e2eDelayTargetMs: scaled(slice.e2e_delay_target_s, MS),
    priority: String(slice.priority),
    scheme: slice.scheme,
    markingThresholdMs: scaled(slice.marking_threshold_s, MS),
    codelTargetMs: slice.codel ? scaled(slice.codel.target_s, MS) : CODEL_DEFAULTS.targetMs,
    codelIntervalMs: slice.codel ? scaled(slice.codel.interval_s, MS) : CODEL_DEFAULTS.intervalMs,
    codelEcnMark: slice.codel?.ecn_mark ?? CODEL_DEFAULTS.ecnMark,
    // An abc slice shows what it holds (resolved); clearing a threshold takes the default again.
    abcMeterMemoryS: slice.abc ? inputText(slice.abc.meter_memory_s) : ABC_DEFAULTS.meterMemoryS,
    abcAverageMemoryS: slice.abc ? inputText(slice.abc.average_memory_s) : ABC_DEFAULTS.averageMemoryS,
    abcReferenceRateKbps: slice.abc ? scaled(slice.abc.reference_rate_bps, 1e3) : ABC_DEFAULTS.referenceRateKbps,
    abcQMinMs: slice.abc ? scaled(slice.abc.q_min_s, MS) : '',
    abcQBaseMs: slice.abc ? scaled(slice.abc.q_base_s, MS) : '',
    abcGammaMs: slice.abc ? scaled(slice.abc.gamma_s, MS) : '',
    abcKey: slice.abc?.key ?? ABC_DEFAULTS.key,
    abcPrefixLength: slice.abc?.key === 'source_prefix' ? String(slice.abc.prefix_length) : '',
    maxPacketBytes: slice.max_packet_bytes === null ? '' : String(slice.max_packet_bytes),
    slaMaxDelayMs: scaled(slice.sla.max_delay_s, MS),
    slaMinThroughputMbps: scaled(slice.sla.min_throughput_bps, MBIT),
    slaMaxLossPercent: scaled(slice.sla.max_loss_ratio, 0.01),
    slaMaxMarkPercent: scaled(slice.sla.max_mark_ratio, 0.01),
    linkIds: [...slice.link_ids],
  };
}


interface Parsed {
  name: string;
  description: string;
  vlan_id: number | null;
  ipv4_prefixes: string[];
  rate_bps: number;
  burst_limit_s: number;
  delay_target_s: number | null;
  e2e_delay_target_s: number | null;
  priority: number;
  scheme: QueueScheme;
  marking_threshold_s: number | null;
  codel: CodelParameters | null;
  abc: AbcParameters | null;
  max_packet_bytes: number | null;
  sla: {
    max_delay_s: number | null;
    min_throughput_bps: number | null;
    max_loss_ratio: number | null;
    max_mark_ratio: number | null;
  };
  link_ids: number[];
}

export interface Validation {
  errors: SliceFormErrors;
  /** The values in API units; present only when there is no error. */
  parsed?: Parsed;
}

function numberField(
  errors: SliceFormErrors,
  key: string,
  text: string,
  opts: { required?: boolean; scale: number; min?: number; minExclusive?: number; max?: number; integer?: boolean; label?: string },
): number | null {
  const value = parseDecimal(text);
  if (value === null) {
    if (opts.required) errors[key] = 'Required.';
    return null;
  }
  if (Number.isNaN(value) || !Number.isFinite(value)) {
    errors[key] = 'Enter a number.';
    return null;
  }
  if (opts.integer && !Number.isInteger(value)) {
    errors[key] = 'Enter a whole number.';
    return null;
  }
  const scaled = value * opts.scale;
  if (opts.minExclusive !== undefined && !(scaled > opts.minExclusive)) {
    errors[key] = 'Must be greater than 0.';
    return null;
  }
  if (opts.min !== undefined && scaled < opts.min) {
    errors[key] = `Must be at least ${inputText(opts.min / opts.scale)}.`;
    return null;
  }
  if (opts.max !== undefined && scaled > opts.max) {
    errors[key] = `Must be at most ${inputText(opts.max / opts.scale)}.`;
    return null;
  }
  return scaled;
}

/** CoDel's parameters, checked as `dataplane.slice_policy` does: the target below the burst
 * limit (else the virtual queue drops first and CoDel never acts) and at most the delay target. */
function validateCodel(
  errors: SliceFormErrors,
  values: SliceFormValues,
  burst: number | null,
  delayTarget: number | null,
): CodelParameters | null {
  const target = numberField(errors, 'codel.target_s', values.codelTargetMs, {
    required: true,
    scale: MS,
    minExclusive: 0,
    max: LIMITS.burstLimitMax,
  });
  const interval = numberField(errors, 'codel.interval_s', values.codelIntervalMs, {
    required: true,
    scale: MS,
    min: LIMITS.codelIntervalMin,
    max: LIMITS.burstLimitMax,
  });
  if (target !== null && burst !== null && target >= burst) {
    errors['codel.target_s'] = 'The CoDel target must be below the burst limit.';
  } else if (target !== null && delayTarget !== null && target > delayTarget) {
    errors['codel.target_s'] = 'The CoDel target must be at most the delay target.';
  }
  if (target === null || interval === null || errors['codel.target_s']) return null;
  return { target_s: target, interval_s: interval, ecn_mark: values.codelEcnMark };
}

/** ABC's parameters, checked as the API does (`dataplane.abc_config`, `AbcConfig`): memories
 * within the decay tables' 1 ms to 10 s, Q_min at most Q_base at most the burst limit (a
 * threshold left empty resolves as the API resolves it), a prefix length only with, and always
 * with, the source-prefix key. Thresholds left empty are not sent: the API fills them in. */
function validateAbc(
  errors: SliceFormErrors,
  values: SliceFormValues,
  rate: number | null,
  burst: number | null,
): AbcParameters | null {
  const memory = { required: true, scale: 1, min: LIMITS.abcMemoryMin, max: LIMITS.abcMemoryMax };
  const meter = numberField(errors, 'abc.meter_memory_s', values.abcMeterMemoryS, memory);
  const average = numberField(errors, 'abc.average_memory_s', values.abcAverageMemoryS, memory);
  const reference = numberField(errors, 'abc.reference_rate_bps', values.abcReferenceRateKbps, {
    required: true,
    scale: 1e3,
    min: LIMITS.abcReferenceRateMin,
    max: LIMITS.abcReferenceRateMax,
  });
  const seconds = { scale: MS, min: 0, max: LIMITS.burstLimitMax };
  const qMin = numberField(errors, 'abc.q_min_s', values.abcQMinMs, seconds);
  const qBase = numberField(errors, 'abc.q_base_s', values.abcQBaseMs, seconds);
  const gamma = numberField(errors, 'abc.gamma_s', values.abcGammaMs, seconds);
  let prefixLength: number | null = null;
  if (values.abcKey === 'source_prefix') {
    prefixLength = numberField(errors, 'abc.prefix_length', values.abcPrefixLength, {
      required: true,
      scale: 1,
      integer: true,
      min: 0,
      max: 32,
    });
    if (errors['abc.prefix_length'] === 'Required.') {
      errors['abc.prefix_length'] = 'Aggregates by source prefix need a prefix length.';
    }
  }
  if (rate !== null && burst !== null && !errors['abc.q_min_s'] && !errors['abc.q_base_s']) {
    const resolved = abcThresholdDefaults(rate, burst, { qMin, qBase });
    const low = qMin ?? resolved.qMin;
    const base = qBase ?? resolved.qBase;
    if (low > burst) errors['abc.q_min_s'] = 'Q_min must be at most the burst limit.';
    else if (base > burst) errors['abc.q_base_s'] = 'Q_base must be at most the burst limit.';
    else if (base < low) errors['abc.q_base_s'] = 'Q_base must be at least Q_min.';
  }
  const failed = Object.keys(errors).some((key) => key.startsWith('abc.'));
  if (failed || meter === null || average === null || reference === null) return null;
  const abc: AbcParameters = {
    meter_memory_s: meter,
    average_memory_s: average,
    reference_rate_bps: reference,
    key: values.abcKey,
  };
  if (qMin !== null) abc.q_min_s = qMin;
  if (qBase !== null) abc.q_base_s = qBase;
  if (gamma !== null) abc.gamma_s = gamma;
  if (prefixLength !== null) abc.prefix_length = prefixLength;
  return abc;
}

export function validateSlice(values: SliceFormValues): Validation {
  const errors: SliceFormErrors = {};
  const name = values.name.trim();
  if (!name) errors.name = 'Required.';
  else if (name.length > LIMITS.nameMaxLength) errors.name = `At most ${LIMITS.nameMaxLength} characters.`;
  else if (!LIMITS.namePattern.test(name)) {
    errors.name = 'Start with a letter or digit; then letters, digits, space and _ . : / @ + -';
  }
  const description = values.description.trim();
  if (description.length > LIMITS.descriptionMaxLength) {
    errors.description = `At most ${LIMITS.descriptionMaxLength} characters.`;
  }

  const vlan = numberField(errors, 'vlan_id', values.vlanId, {
    scale: 1,
    integer: true,
    min: LIMITS.vlanMin,
    max: LIMITS.vlanMax,
  });
  const prefixes = splitPrefixes(values.prefixes);
  const badPrefix = prefixes.map(checkPrefix).find((reason) => reason !== null);
  if (badPrefix) errors.ipv4_prefixes = badPrefix;
  else if (prefixes.length > LIMITS.prefixesMax) {
    errors.ipv4_prefixes = `At most ${LIMITS.prefixesMax} prefixes.`;
  }
  if (vlan === null && !errors.vlan_id && prefixes.length === 0 && !errors.ipv4_prefixes) {
    errors.vlan_id = 'A slice needs a VLAN id or IPv4 prefixes to match.';
  }

  const rate = numberField(errors, 'rate_bps', values.rateMbps, {
    required: true,
    scale: MBIT,
    min: LIMITS.rateMin,
    max: LIMITS.rateMax,
  });
  const burst = numberField(errors, 'burst_limit_s', values.burstLimitMs, {
    required: true,
    scale: MS,
    minExclusive: 0,
    max: LIMITS.burstLimitMax,
  });
  const target = numberField(errors, 'delay_target_s', values.delayTargetMs, {
    scale: MS,
    minExclusive: 0,
    max: LIMITS.secondsMax,
  });
  const e2eTarget = numberField(errors, 'e2e_delay_target_s', values.e2eDelayTargetMs, {
    scale: MS,
    minExclusive: 0,
    max: LIMITS.secondsMax,
  });
  const priority = numberField(errors, 'priority', values.priority, {
    required: true,
    scale: 1,
    integer: true,
    min: LIMITS.priorityMin,
    max: LIMITS.priorityMax,
  });
  let threshold: number | null = null;
  if (values.scheme === 'ecn_step') {
    threshold = numberField(errors, 'marking_threshold_s', values.markingThresholdMs, {
      required: true,
      scale: MS,
      minExclusive: 0,
      max: LIMITS.burstLimitMax,
    });
    if (threshold !== null && burst !== null && threshold >= burst) {
      errors.marking_threshold_s = 'The marking threshold must be below the burst limit.';
    }
    if (errors.marking_threshold_s === 'Required.') {
      errors.marking_threshold_s = 'ECN step marking needs a marking threshold.';
    }
  }
  const codel = values.scheme === 'codel' ? validateCodel(errors, values, burst, target ?? burst) : null;
  const abc = values.scheme === 'abc' ? validateAbc(errors, values, rate, burst) : null;
  const packet = numberField(errors, 'max_packet_bytes', values.maxPacketBytes, {
    scale: 1,
    integer: true,
    min: LIMITS.packetMin,
    max: LIMITS.packetMax,
  });
  const slaDelay = numberField(errors, 'sla.max_delay_s', values.slaMaxDelayMs, {
    scale: MS,
    minExclusive: 0,
    max: LIMITS.secondsMax,
  });
  const slaThroughput = numberField(errors, 'sla.min_throughput_bps', values.slaMinThroughputMbps, {
    scale: MBIT,
    min: 0,
  });
  const slaLoss = numberField(errors, 'sla.max_loss_ratio', values.slaMaxLossPercent, {
    scale: 0.01,
    min: 0,
    max: 1,
  });
  const slaMark = numberField(errors, 'sla.max_mark_ratio', values.slaMaxMarkPercent, {
    scale: 0.01,
    min: 0,
    max: 1,
  });
  const linkIds = [...new Set(values.linkIds)];
  if (linkIds.length < LIMITS.linksMin) errors.link_ids = 'Choose at least one link the slice crosses.';
  else if (linkIds.length > LIMITS.linksMax) errors.link_ids = `At most ${LIMITS.linksMax} links.`;

  if (Object.keys(errors).length > 0 || rate === null || burst === null || priority === null) {
    return { errors };
  }
  return {
    errors,
    parsed: {
      name,
      description,
      vlan_id: vlan,
      ipv4_prefixes: prefixes,
      rate_bps: rate,
      burst_limit_s: burst,
      delay_target_s: target,
      e2e_delay_target_s: e2eTarget,
      priority,
      scheme: values.scheme,
      marking_threshold_s: threshold,
      codel,
      abc,
      max_packet_bytes: packet,
      sla: {
        max_delay_s: slaDelay,
        min_throughput_bps: slaThroughput,
        max_loss_ratio: slaLoss,
        max_mark_ratio: slaMark,
      },
      link_ids: linkIds,
    },
  };
}

export function createBody(parsed: Parsed): SliceCreate {
  const body: SliceCreate = {
    name: parsed.name,
    description: parsed.description,
    ipv4_prefixes: parsed.ipv4_prefixes,
    rate_bps: parsed.rate_bps,
    burst_limit_s: parsed.burst_limit_s,
    priority: parsed.priority,
    scheme: parsed.scheme,
    sla: parsed.sla,
    link_ids: parsed.link_ids,
  };
  if (parsed.vlan_id !== null) body.vlan_id = parsed.vlan_id;
  if (parsed.delay_target_s !== null) body.delay_target_s = parsed.delay_target_s;
  if (parsed.e2e_delay_target_s !== null) body.e2e_delay_target_s = parsed.e2e_delay_target_s;
  if (parsed.marking_threshold_s !== null) body.marking_threshold_s = parsed.marking_threshold_s;
  if (parsed.codel !== null) body.codel = parsed.codel;
  if (parsed.abc !== null) body.abc = parsed.abc;
  if (parsed.max_packet_bytes !== null) body.max_packet_bytes = parsed.max_packet_bytes;
  return body;
}

/** A full update: every field, `null` where the API allows clearing it. */
export function updateBody(parsed: Parsed): SliceUpdate {
  return {
    name: parsed.name,
    description: parsed.description,
    vlan_id: parsed.vlan_id,
    ipv4_prefixes: parsed.ipv4_prefixes,
    rate_bps: parsed.rate_bps,
    burst_limit_s: parsed.burst_limit_s,
    delay_target_s: parsed.delay_target_s ?? parsed.burst_limit_s,
    e2e_delay_target_s: parsed.e2e_delay_target_s,
    priority: parsed.priority,
    scheme: parsed.scheme,
    marking_threshold_s: parsed.marking_threshold_s,
    codel: parsed.codel,
    abc: parsed.abc,
    max_packet_bytes: parsed.max_packet_bytes,
    sla: parsed.sla,
    link_ids: parsed.link_ids,
  };
}

/** What the analytics needs of the slice being typed, or null while it is not valid yet. */
export function candidateDoc(values: SliceFormValues, fallbackName: string): SliceDocument | null {
  const errors: SliceFormErrors = {};
  const rate = numberField(errors, 'rate', values.rateMbps, { required: true, scale: MBIT, minExclusive: 0 });
  const burst = numberField(errors, 'burst', values.burstLimitMs, {
    required: true,
    scale: MS,
    minExclusive: 0,
    max: LIMITS.secondsMax,
  });
  const target = numberField(errors, 'target', values.delayTargetMs, {
    scale: MS,
    minExclusive: 0,
    max: LIMITS.secondsMax,
  });
  const priority = numberField(errors, 'priority', values.priority, {
    required: true,
    scale: 1,
    integer: true,
    min: 0,
    max: 7,
  });
  const packet = numberField(errors, 'packet', values.maxPacketBytes, {
    scale: 1,
    integer: true,
    min: LIMITS.packetMin,
    max: LIMITS.packetMax,
  });
  if (Object.keys(errors).length || rate === null || burst === null || priority === null) return null;
  const doc: SliceDocument = {
    name: values.name.trim() || fallbackName,
    rate_bps: rate,
    priority,
    burst_limit_s: burst,
    delay_target_s: target ?? burst,
  };
  if (packet !== null) doc.max_packet_bytes = packet;
  return doc;
}

/**
 * The slice form's values (what people type: Mbit/s, ms, %), their validation and their
 * conversion to the API's bodies (bit/s, seconds, ratios).
 *
 * The rules mirror the API's, field by field (`api/schemas/slices.py` for single fields,
 * `services/slices._check_rules` for rules across fields), and errors are keyed by the API's
 * field names, so the API's own 422 errors land on the same inputs. A unit test checks these
 * limits against the OpenAPI document; those of the data plane come from its generated constants.
 */
import { BURST_LIMIT_MAX_NS, MAX_PRIORITY, RATE_MAX_BPS, RATE_MIN_BPS, VLAN_ID_MAX, VLAN_ID_MIN } from '@/config/p4-constants';
import type { CodelParameters, QueueScheme, SliceCreate, SliceDocument, SlicePublic, SliceUpdate } from '@/lib/api/schema';
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
} as const;

/** CoDel's defaults (RFC 8289's 5 ms target and 100 ms interval), as typed in the form. */
export const CODEL_DEFAULTS = { targetMs: '5', intervalMs: '100', ecnMark: false } as const;

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
    maxPacketBytes: slice.max_packet_bytes === null ? '' : String(slice.max_packet_bytes),
    slaMaxDelayMs: scaled(slice.sla.max_delay_s, MS),
    slaMinThroughputMbps: scaled(slice.sla.min_throughput_bps, MBIT),
    slaMaxLossPercent: scaled(slice.sla.max_loss_ratio, 0.01),
    slaMaxMarkPercent: scaled(slice.sla.max_mark_ratio, 0.01),
    linkIds: [...slice.link_ids],
  };
}

/** An IPv4 prefix `a.b.c.d/n` without host bits, or the reason it is not one. */
export function checkPrefix(text: string): string | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/.exec(text);
  if (!match) return `${text} is not an IPv4 prefix like 10.0.0.0/24`;
  const octets = match.slice(1, 5).map(Number);
  if (octets.some((o) => o > 255)) return `${text} has an octet above 255`;
  const length = match[5] === undefined ? 32 : Number(match[5]);
  if (length > 32) return `${text} has a prefix length above 32`;
  const address = octets.reduce((acc, o) => acc * 256 + o, 0);
  const hostBits = 2 ** (32 - length);
  if (address % hostBits !== 0) return `${text} has host bits set`;
  return null;
}

export function splitPrefixes(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((p) => p.trim())
    .filter(Boolean);
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

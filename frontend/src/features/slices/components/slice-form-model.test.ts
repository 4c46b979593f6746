import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import {
  ABC_DEFAULTS,
  ABC_PAPER_PACKETS,
  CODEL_DEFAULTS,
  EMPTY_VALUES,
  LIMITS,
  abcThresholdDefaults,
  candidateDoc,
  createBody,
  updateBody,
  validateSlice,
  valuesFromSlice,
  type SliceFormValues,
} from './slice-form-model';

const valid: SliceFormValues = {
  ...EMPTY_VALUES,
  name: 'Enterprise',
  prefixes: '10.2.0.0/16, 10.3.0.0/16',
  rateMbps: '12',
  burstLimitMs: '10',
  priority: '6',
  linkIds: [3, 3, 4],
};

describe('validateSlice', () => {
  it('converts what people type to the API units', () => {
    const { errors, parsed } = validateSlice({ ...valid, slaMaxLossPercent: '1', slaMinThroughputMbps: '5' });
    expect(errors).toEqual({});
    const body = createBody(parsed!);
    expect(body).toMatchObject({
      name: 'Enterprise', rate_bps: 12e6, burst_limit_s: 0.01, priority: 6,
      ipv4_prefixes: ['10.2.0.0/16', '10.3.0.0/16'], link_ids: [3, 4], scheme: 'tail_drop',
    });
    expect(body.sla).toMatchObject({ max_loss_ratio: 0.01, min_throughput_bps: 5e6 });
    expect(body).not.toHaveProperty('delay_target_s');
    expect(body).not.toHaveProperty('e2e_delay_target_s');
    expect(updateBody(parsed!).delay_target_s).toBe(0.01);
    expect(updateBody(parsed!).e2e_delay_target_s).toBeNull();
  });

  it('sends an end-to-end target in seconds, and null to clear it', () => {
    const { parsed } = validateSlice({ ...valid, e2eDelayTargetMs: '25' });
    expect(createBody(parsed!).e2e_delay_target_s).toBeCloseTo(0.025);
    expect(updateBody(parsed!).e2e_delay_target_s).toBeCloseTo(0.025);
    expect(validateSlice({ ...valid, e2eDelayTargetMs: '0' }).errors.e2e_delay_target_s).toMatch(/greater than 0/);
    expect(validateSlice({ ...valid, e2eDelayTargetMs: '3600001' }).errors.e2e_delay_target_s).toMatch(/at most/);
  });

  it('keys errors by the API field names, so server errors land on the same inputs', () => {
    const { errors, parsed } = validateSlice({ ...EMPTY_VALUES, name: '-bad', rateMbps: '0', burstLimitMs: 'abc', priority: '9' });
    expect(parsed).toBeUndefined();
    expect(Object.keys(errors).sort()).toEqual(['burst_limit_s', 'link_ids', 'name', 'priority', 'rate_bps', 'vlan_id']);
    expect(errors.vlan_id).toMatch(/VLAN id or IPv4 prefixes/);
  });

  it('mirrors the API rules across fields (ECN threshold)', () => {
    const ecn = { ...valid, scheme: 'ecn_step' as const };
    expect(validateSlice(ecn).errors.marking_threshold_s).toMatch(/needs a marking threshold/);
    expect(validateSlice({ ...ecn, markingThresholdMs: '20' }).errors.marking_threshold_s).toMatch(/must be below the burst limit/);
    expect(validateSlice({ ...ecn, markingThresholdMs: '5' }).parsed?.marking_threshold_s).toBeCloseTo(0.005);
  });

  it('sends no marking threshold with the meter scheme', () => {
    const meter = { ...valid, scheme: 'meter' as const, markingThresholdMs: '5' };
    const { errors, parsed } = validateSlice(meter);
    expect(errors.marking_threshold_s).toBeUndefined();
    expect(parsed?.scheme).toBe('meter');
    expect(parsed?.marking_threshold_s).toBeNull();
  });

  it('sends CoDel with its defaults, in seconds, and only with the codel scheme', () => {
    const codel = { ...valid, scheme: 'codel' as const };
    const { errors, parsed } = validateSlice(codel);
    expect(errors).toEqual({});
    expect(createBody(parsed!).codel).toEqual({ target_s: 0.005, interval_s: 0.1, ecn_mark: false });
    const given = validateSlice({ ...codel, codelTargetMs: '2', codelIntervalMs: '50', codelEcnMark: true }).parsed!;
    expect(updateBody(given).codel).toEqual({ target_s: 0.002, interval_s: 0.05, ecn_mark: true });
    const tailDrop = validateSlice({ ...codel, scheme: 'tail_drop' }).parsed!;
    expect(createBody(tailDrop)).not.toHaveProperty('codel');
    expect(updateBody(tailDrop).codel).toBeNull();
  });

  it('mirrors the API rules on CoDel (target below the burst limit and within the delay target)', () => {
    const codel = { ...valid, scheme: 'codel' as const };
    expect(validateSlice({ ...codel, codelTargetMs: '10' }).errors['codel.target_s']).toMatch(/below the burst limit/);
    expect(validateSlice({ ...codel, burstLimitMs: '20', delayTargetMs: '8', codelTargetMs: '9' }).errors['codel.target_s']).toMatch(
      /at most the delay target/,
    );
    expect(validateSlice({ ...codel, codelTargetMs: '' }).errors['codel.target_s']).toBe('Required.');
    expect(validateSlice({ ...codel, codelIntervalMs: '0.5' }).errors['codel.interval_s']).toMatch(/at least 1/);
  });

  it('sends ABC with its constant defaults and leaves the thresholds to the API unless typed', () => {
    const abc = { ...valid, scheme: 'abc' as const };
    const { errors, parsed } = validateSlice(abc);
    expect(errors).toEqual({});
    expect(createBody(parsed!).abc).toEqual({
      meter_memory_s: 3,
      average_memory_s: 0.3,
      reference_rate_bps: 1e4,
      key: 'source_address',
    });
    const given = validateSlice({
      ...abc,
      abcMeterMemoryS: '1',
      abcReferenceRateKbps: '100',
      abcQMinMs: '2',
      abcQBaseMs: '8',
      abcGammaMs: '0.5',
      abcKey: 'source_prefix',
      abcPrefixLength: '24',
    }).parsed!;
    expect(updateBody(given).abc).toEqual({
      meter_memory_s: 1,
      average_memory_s: 0.3,
      reference_rate_bps: 1e5,
      q_min_s: 0.002,
      q_base_s: 0.008,
      gamma_s: 0.0005,
      key: 'source_prefix',
      prefix_length: 24,
    });
    const tailDrop = validateSlice({ ...abc, scheme: 'tail_drop' }).parsed!;
    expect(createBody(tailDrop)).not.toHaveProperty('abc');
    expect(updateBody(tailDrop).abc).toBeNull();
  });

  it('resolves ABC thresholds as the API does: packets at the rate, capped at the burst limit', () => {
    // 12 Mbit/s: a 1,500-byte packet takes 1 ms; the burst limit is 10 ms.
    const found = abcThresholdDefaults(12e6, 0.01);
    expect(found.qMin).toBeCloseTo(0.006);
    expect(found.qBase).toBeCloseTo(0.01); // 20 ms capped
    expect(found.gamma).toBeCloseTo(0.016);
    expect(abcThresholdDefaults(12e6, 0.05, { qMin: 0.03 }).qBase).toBeCloseTo(0.03);
    expect(abcThresholdDefaults(12e6, 0.05, { qBase: 0.004 }).qMin).toBeCloseTo(0.004);
    expect(ABC_PAPER_PACKETS).toEqual({ qMin: 6, qBase: 20, gamma: 16 });
  });

  it('mirrors the API rules on ABC, keyed by its fields', () => {
    const abc = { ...valid, scheme: 'abc' as const };
    const error = (overrides: Partial<SliceFormValues>, key: string) => validateSlice({ ...abc, ...overrides }).errors[key];
    expect(error({ abcQBaseMs: '11' }, 'abc.q_base_s')).toMatch(/at most the burst limit/);
    expect(error({ abcQMinMs: '12' }, 'abc.q_min_s')).toMatch(/at most the burst limit/);
    expect(error({ abcQMinMs: '5', abcQBaseMs: '4' }, 'abc.q_base_s')).toMatch(/at least Q_min/);
    expect(error({ abcQMinMs: '9' }, 'abc.q_base_s')).toBeUndefined(); // Q_base's default follows
    expect(error({ abcGammaMs: '-1' }, 'abc.gamma_s')).toMatch(/at least 0/);
    expect(error({ abcMeterMemoryS: '0' }, 'abc.meter_memory_s')).toMatch(/at least 0.001/);
    expect(error({ abcAverageMemoryS: '11' }, 'abc.average_memory_s')).toMatch(/at most 10/);
    expect(error({ abcAverageMemoryS: '' }, 'abc.average_memory_s')).toBe('Required.');
    expect(error({ abcReferenceRateKbps: '0.0005' }, 'abc.reference_rate_bps')).toMatch(/at least/);
    expect(error({ abcKey: 'source_prefix' }, 'abc.prefix_length')).toMatch(/need a prefix length/);
    expect(error({ abcKey: 'source_prefix', abcPrefixLength: '33' }, 'abc.prefix_length')).toMatch(/at most 32/);
    expect(error({ abcKey: 'source_prefix', abcPrefixLength: '8.5' }, 'abc.prefix_length')).toMatch(/whole number/);
    expect(validateSlice({ ...abc, abcQBaseMs: '11' }).parsed).toBeUndefined();
  });

  it('shows an abc slice as it is stored, and other slices with ABC defaults', () => {
    const stored = {
      ...valuesFromSlice({
        id: 1, name: 'abc', description: '', vlan_id: null, ipv4_prefixes: ['10.0.0.0/24'], rate_bps: 12e6,
        burst_limit_s: 0.01, burst_bytes: 15000, delay_target_s: 0.01, e2e_delay_target_s: null, priority: 5,
        scheme: 'abc', marking_threshold_s: null, codel: null, max_packet_bytes: null,
        abc: {
          meter_memory_s: 1, average_memory_s: 0.1, reference_rate_bps: 2e4, q_min_s: 0.006, q_base_s: 0.01,
          gamma_s: 0.016, key: 'source_prefix', prefix_length: 16,
        },
        sla: { max_delay_s: null, min_throughput_bps: null, max_loss_ratio: null, max_mark_ratio: null },
        link_ids: [1], path: [1], dp_sids: [], state: 'active', state_detail: null, created_at: '', updated_at: '',
      }),
    };
    expect(stored).toMatchObject({
      abcMeterMemoryS: '1', abcAverageMemoryS: '0.1', abcReferenceRateKbps: '20', abcQMinMs: '6',
      abcQBaseMs: '10', abcGammaMs: '16', abcKey: 'source_prefix', abcPrefixLength: '16',
    });
    expect(EMPTY_VALUES).toMatchObject({
      abcMeterMemoryS: ABC_DEFAULTS.meterMemoryS, abcQMinMs: '', abcKey: 'source_address', abcPrefixLength: '',
    });
  });

});

describe('the limits mirror the OpenAPI document', () => {
  type Schema = { properties: Record<string, { anyOf?: Record<string, unknown>[] } & Record<string, unknown>> };
  const openapi: unknown = JSON.parse(readFileSync(resolve(process.cwd(), 'openapi.json'), 'utf8'));
  const schema = (openapi as { components: { schemas: Record<string, Schema> } }).components.schemas.SliceCreate!;
  const prop = (name: string) => {
    const p = schema.properties[name]!;
    return (p.anyOf?.find((x) => x.type !== 'null') ?? p) as Record<string, unknown>;
  };

  it('name, VLAN, priority, packet size, prefixes, seconds and links', () => {
    expect(prop('name').maxLength).toBe(LIMITS.nameMaxLength);
    expect(prop('name').pattern).toBe(LIMITS.namePattern.source);
    expect(prop('description').maxLength).toBe(LIMITS.descriptionMaxLength);
    expect([prop('vlan_id').minimum, prop('vlan_id').maximum]).toEqual([LIMITS.vlanMin, LIMITS.vlanMax]);
    expect([prop('priority').minimum, prop('priority').maximum]).toEqual([LIMITS.priorityMin, LIMITS.priorityMax]);
    expect([prop('max_packet_bytes').minimum, prop('max_packet_bytes').maximum]).toEqual([LIMITS.packetMin, LIMITS.packetMax]);
    expect(prop('ipv4_prefixes').maxItems).toBe(LIMITS.prefixesMax);
    expect(prop('burst_limit_s').maximum).toBe(LIMITS.burstLimitMax);
    expect(prop('marking_threshold_s').maximum).toBe(LIMITS.burstLimitMax);
    expect(prop('burst_limit_s').exclusiveMinimum).toBe(0);
    expect(prop('e2e_delay_target_s').maximum).toBe(LIMITS.secondsMax);
    expect(prop('e2e_delay_target_s').exclusiveMinimum).toBe(0);
    expect([prop('rate_bps').minimum, prop('rate_bps').maximum]).toEqual([LIMITS.rateMin, LIMITS.rateMax]);
    expect([prop('link_ids').minItems, prop('link_ids').maxItems]).toEqual([LIMITS.linksMin, LIMITS.linksMax]);
  });

  it('CoDel: defaults and bounds', () => {
    const codel = (openapi as { components: { schemas: Record<string, Schema> } }).components.schemas.CodelParameters!;
    const member = (name: string) => codel.properties[name]!;
    expect(member('target_s').default).toBe(Number(CODEL_DEFAULTS.targetMs) / 1000);
    expect(member('interval_s').default).toBe(Number(CODEL_DEFAULTS.intervalMs) / 1000);
    expect(member('ecn_mark').default).toBe(CODEL_DEFAULTS.ecnMark);
    expect([member('interval_s').minimum, member('interval_s').maximum]).toEqual([LIMITS.codelIntervalMin, LIMITS.burstLimitMax]);
    expect(member('target_s').maximum).toBe(LIMITS.burstLimitMax);
  });

  it('ABC: defaults and bounds', () => {
    const abc = (openapi as { components: { schemas: Record<string, Schema> } }).components.schemas.AbcParameters!;
    const member = (name: string) => {
      const p = abc.properties[name]!;
      return { ...(p.anyOf?.find((x) => x.type !== 'null') ?? p), default: p.default } as Record<string, unknown>;
    };
    expect(member('meter_memory_s').default).toBe(Number(ABC_DEFAULTS.meterMemoryS));
    expect(member('average_memory_s').default).toBe(Number(ABC_DEFAULTS.averageMemoryS));
    expect(member('reference_rate_bps').default).toBe(Number(ABC_DEFAULTS.referenceRateKbps) * 1e3);
    expect(member('key').default).toBe(ABC_DEFAULTS.key);
    for (const name of ['meter_memory_s', 'average_memory_s']) {
      expect([member(name).minimum, member(name).maximum]).toEqual([LIMITS.abcMemoryMin, LIMITS.abcMemoryMax]);
    }
    expect([member('reference_rate_bps').minimum, member('reference_rate_bps').maximum]).toEqual([
      LIMITS.abcReferenceRateMin,
      LIMITS.abcReferenceRateMax,
    ]);
    for (const name of ['q_min_s', 'q_base_s', 'gamma_s']) {
      // no default in the document: the API resolves it at the slice's rate (abcThresholdDefaults)
      expect([member(name).minimum, member(name).maximum, member(name).default]).toEqual([0, LIMITS.burstLimitMax, undefined]);
    }
    expect([member('prefix_length').minimum, member('prefix_length').maximum]).toEqual([0, 32]);
  });
});

it('previews the slice as soon as its numbers are valid', () => {
  expect(candidateDoc({ ...EMPTY_VALUES, rateMbps: '12' }, 'new')).toBeNull();
  expect(candidateDoc(valid, 'new')).toEqual({ name: 'Enterprise', rate_bps: 12e6, priority: 6, burst_limit_s: 0.01, delay_target_s: 0.01 });
  expect(candidateDoc({ ...valid, name: ' ' }, 'new slice')?.name).toBe('new slice');
});

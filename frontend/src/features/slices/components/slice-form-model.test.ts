import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { CODEL_DEFAULTS, EMPTY_VALUES, LIMITS, candidateDoc, checkPrefix, createBody, updateBody, validateSlice, type SliceFormValues } from './slice-form-model';

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

  it('checks prefixes like ipaddress.IPv4Network (no host bits)', () => {
    expect(checkPrefix('10.0.0.0/8')).toBeNull();
    expect(checkPrefix('10.0.0.1')).toBeNull();
    expect(checkPrefix('10.0.0.1/24')).toMatch(/host bits/);
    expect(checkPrefix('300.0.0.0/8')).toMatch(/above 255/);
    expect(checkPrefix('10.0.0.0/33')).toMatch(/above 32/);
    expect(checkPrefix('fe80::/10')).toMatch(/not an IPv4 prefix/);
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
});

it('previews the slice as soon as its numbers are valid', () => {
  expect(candidateDoc({ ...EMPTY_VALUES, rateMbps: '12' }, 'new')).toBeNull();
  expect(candidateDoc(valid, 'new')).toEqual({ name: 'Enterprise', rate_bps: 12e6, priority: 6, burst_limit_s: 0.01, delay_target_s: 0.01 });
  expect(candidateDoc({ ...valid, name: ' ' }, 'new slice')?.name).toBe('new slice');
});

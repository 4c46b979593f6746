import { checkPrefix, splitPrefixes } from './ipv4';

describe('IPv4 prefixes', () => {
  it('checks prefixes like ipaddress.IPv4Network (no host bits)', () => {
    expect(checkPrefix('10.0.0.0/8')).toBeNull();
    expect(checkPrefix('10.0.0.1')).toBeNull();
    expect(checkPrefix('10.0.0.1/24')).toMatch(/host bits/);
    expect(checkPrefix('300.0.0.0/8')).toMatch(/above 255/);
    expect(checkPrefix('10.0.0.0/33')).toMatch(/above 32/);
    expect(checkPrefix('fe80::/10')).toMatch(/not an IPv4 prefix/);
  });

  it('splits a list on spaces, commas and semicolons', () => {
    expect(splitPrefixes(' 10.0.0.0/8, 10.1.0.0/16;\n192.168.0.0/24 ')).toEqual(['10.0.0.0/8', '10.1.0.0/16', '192.168.0.0/24']);
  });
});

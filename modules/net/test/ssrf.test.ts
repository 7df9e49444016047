import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkAddress, hostAllowListed, originAllowListed } from '../services/ssrf.ts';

const none = { allow_hosts: [], allow_cidrs: [] };

describe('SSRF address decision', () => {
  const table: Array<[string, boolean, RegExp?]> = [
    ['8.8.8.8', true],
    ['1.1.1.1', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false, /loopback/],
    ['127.5.6.7', false, /loopback/],
    ['::1', false, /loopback/],
    ['10.1.2.3', false, /private/],
    ['172.16.0.1', false, /private/],
    ['172.31.255.255', false, /private/],
    ['192.168.1.1', false, /private/],
    ['169.254.1.1', false, /link-local/],
    ['fe80::1', false, /link-local/],
    ['100.64.0.1', false, /carrier-grade NAT/],
    ['100.127.255.254', false, /carrier-grade NAT/],
    ['169.254.169.254', false, /metadata/],
    ['fd00:ec2::254', false, /metadata/],
    ['fd12:3456::1', false, /unique-local/],
    ['fc00::1', false, /unique-local/],
    ['0.0.0.0', false, /unspecified/],
    ['::', false, /unspecified/],
    ['224.0.0.1', false, /multicast/],
    ['255.255.255.255', false, /broadcast/],
    ['::ffff:127.0.0.1', false, /loopback/],
    ['::ffff:10.0.0.1', false, /private/],
    ['::ffff:169.254.169.254', false, /metadata/],
    ['::ffff:8.8.8.8', true],
    ['64:ff9b::a00:1', false, /NAT64/],
    ['2002:a00:1::1', false, /6to4/],
    ['not-an-ip', false, /not an IP address/],
  ];
  for (const [address, expected, reason] of table) {
    it(`${address} → ${expected ? 'allowed' : 'blocked'}`, () => {
      const v = checkAddress(address, none);
      assert.equal(v.allowed, expected);
      if (!v.allowed && reason) assert.match(v.reason, reason);
    });
  }

  it('allow-listed CIDRs and literal IPs override the block, for that range only', () => {
    const list = { allow_hosts: ['192.168.1.50'], allow_cidrs: ['127.0.0.0/8', 'fd00::/8'] };
    assert.equal(checkAddress('127.0.0.1', list).allowed, true);
    assert.equal(checkAddress('::ffff:127.0.0.1', list).allowed, true);
    assert.equal(checkAddress('fd12::1', list).allowed, true);
    assert.equal(checkAddress('192.168.1.50', list).allowed, true);
    assert.equal(checkAddress('192.168.1.51', list).allowed, false);
    assert.equal(checkAddress('10.0.0.1', list).allowed, false);
    assert.equal(checkAddress('::1', list).allowed, false);
  });

  it('host globs of allow_hosts exempt names, never addresses', () => {
    const list = { allow_hosts: ['*.corp.example', '10.0.0.0/8'], allow_cidrs: [] };
    assert.equal(hostAllowListed('wiki.corp.example', list), true);
    assert.equal(hostAllowListed('corp.example.evil.com', list), false);
    assert.equal(hostAllowListed('10.1.1.1', list), false);
    assert.equal(checkAddress('10.1.1.1', list).allowed, true, 'a CIDR in allow_hosts works as a range');
  });

  it('allow_origins name a host, or a host and port, exactly (the [a2a] allowed_hosts form)', () => {
    const list = { allow_hosts: [], allow_cidrs: [], allow_origins: ['127.0.0.1', 'Agents.LAN:8080', '[::1]:9', '[fd00::5]'] };
    assert.equal(originAllowListed('127.0.0.1', 80, list), true);
    assert.equal(originAllowListed('127.0.0.1', 4545, list), true, 'a host alone allows every port');
    assert.equal(originAllowListed('agents.lan', 8080, list), true, 'case does not matter');
    assert.equal(originAllowListed('agents.lan', 80, list), false, 'another port of a host:port entry');
    assert.equal(originAllowListed('[::1]', 9, list), true);
    assert.equal(originAllowListed('::1', 10, list), false);
    assert.equal(originAllowListed('fd00::5', 443, list), true);
    assert.equal(originAllowListed('127.0.0.2', 80, list), false);
    assert.equal(originAllowListed('x.agents.lan', 8080, list), false, 'no globs');
    assert.equal(originAllowListed('127.0.0.1', 80, { allow_hosts: [], allow_cidrs: [] }), false);
  });
});

/**
 * HTTPS_PROXY / HTTP_PROXY / NO_PROXY with the rules kubectl gets from Go's httpproxy package:
 * which servers go through the proxy and which connect directly.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { proxyFromEnvironment, type ProxyEnv } from '../../../src/kube/env-proxy.ts';

const PROXY = 'http://proxy.corp:3128';

describe('proxyFromEnvironment', () => {
  it.each<[string, string, ProxyEnv, string | undefined]>([
    ['an https server uses HTTPS_PROXY', 'https://api.example.com:6443', { httpsProxy: PROXY }, PROXY],
    ['an https server ignores HTTP_PROXY', 'https://api.example.com:6443', { httpProxy: PROXY }, undefined],
    [
      'an http server uses HTTP_PROXY',
      'http://api.example.com:8080',
      { httpProxy: PROXY, httpsProxy: 'http://other:1' },
      PROXY,
    ],
    ['a proxy without a scheme is http://', 'https://api.example.com', { httpsProxy: 'proxy.corp:3128' }, PROXY],
    [
      'a socks5 proxy is kept as given',
      'https://api.example.com',
      { httpsProxy: 'socks5://proxy.corp:1080' },
      'socks5://proxy.corp:1080',
    ],
    ['localhost is never proxied', 'https://localhost:6443', { httpsProxy: PROXY }, undefined],
    ['a loopback IPv4 address is never proxied', 'https://127.0.0.2:6443', { httpsProxy: PROXY }, undefined],
    ['the IPv6 loopback is never proxied', 'https://[::1]:6443', { httpsProxy: PROXY }, undefined],
    [
      'NO_PROXY=* connects directly everywhere',
      'https://api.example.com',
      { httpsProxy: PROXY, noProxy: '*' },
      undefined,
    ],
    [
      'a domain in NO_PROXY covers itself',
      'https://example.com',
      { httpsProxy: PROXY, noProxy: 'example.com' },
      undefined,
    ],
    [
      'a domain in NO_PROXY covers its subdomains',
      'https://api.example.com',
      { httpsProxy: PROXY, noProxy: 'example.com' },
      undefined,
    ],
    [
      'a domain in NO_PROXY does not cover a longer name',
      'https://api.badexample.com',
      { httpsProxy: PROXY, noProxy: 'example.com' },
      PROXY,
    ],
    [
      '.domain in NO_PROXY covers subdomains',
      'https://api.example.com',
      { httpsProxy: PROXY, noProxy: '.example.com' },
      undefined,
    ],
    [
      '.domain in NO_PROXY does not cover the domain itself',
      'https://example.com',
      { httpsProxy: PROXY, noProxy: '.example.com' },
      PROXY,
    ],
    ['*.domain is .domain', 'https://api.example.com', { httpsProxy: PROXY, noProxy: '*.example.com' }, undefined],
    [
      'entries are trimmed and case-insensitive',
      'https://API.Example.com',
      { httpsProxy: PROXY, noProxy: ' other.org , EXAMPLE.com ' },
      undefined,
    ],
    [
      'a host:port entry matches that port only',
      'https://api.example.com:6443',
      { httpsProxy: PROXY, noProxy: 'api.example.com:6443' },
      undefined,
    ],
    [
      'a host:port entry does not match another port',
      'https://api.example.com',
      { httpsProxy: PROXY, noProxy: 'api.example.com:6443' },
      PROXY,
    ],
    ['an IP entry matches that IP', 'https://10.96.0.1', { httpsProxy: PROXY, noProxy: '10.96.0.1' }, undefined],
    [
      'a CIDR entry matches IPs inside it',
      'https://10.96.0.1',
      { httpsProxy: PROXY, noProxy: '10.0.0.0/8' },
      undefined,
    ],
    [
      'a CIDR entry does not match IPs outside it',
      'https://11.0.0.1',
      { httpsProxy: PROXY, noProxy: '10.0.0.0/8' },
      PROXY,
    ],
    [
      'an IPv6 CIDR entry matches IPv6 hosts',
      'https://[fd00::1]:6443',
      { httpsProxy: PROXY, noProxy: 'fd00::/8' },
      undefined,
    ],
    [
      'a CIDR entry never matches a name',
      'https://api.example.com',
      { httpsProxy: PROXY, noProxy: '0.0.0.0/0' },
      PROXY,
    ],
  ])('%s', (_what, server, env, expected) => {
    expect(proxyFromEnvironment(server, env)).toBe(expected);
  });
});

describe('proxy variables in the configuration', () => {
  it('reads both spellings, the upper-case one winning as in kubectl', () => {
    const config = loadConfig(
      {
        https_proxy: 'http://lower:1',
        HTTPS_PROXY: 'http://upper:2',
        http_proxy: 'http://only-lower:3',
        no_proxy: '.corp',
      },
      '/nonexistent-dir-without-phaselog-yaml',
    );
    expect(config.kube.httpsProxy).toBe('http://upper:2');
    expect(config.kube.httpProxy).toBe('http://only-lower:3');
    expect(config.kube.noProxy).toBe('.corp');
  });
});

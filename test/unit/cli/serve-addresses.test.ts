// What `kvbench serve` prints to reach it: the SSH tunnel goes to the loopback address it listens on
// (127.0.0.2 and ::1 are loopback too), and the URL for a wildcard address (--host 0.0.0.0
// --allow-remote, for a browser on another machine) names this machine, not 127.0.0.1.
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { sshTunnelHint } from '../../../src-main/cli/serve-command.ts';
import { urlHostOf } from '../../../src-main/server/http-server.ts';

describe('kvbench serve addresses', () => {
  it('tunnels to the loopback address it listens on', () => {
    expect(sshTunnelHint('127.0.0.1', 8642)).toBe('ssh -L 8642:127.0.0.1:8642');
    expect(sshTunnelHint('127.0.0.2', 8661)).toBe('ssh -L 8661:127.0.0.2:8661');
    expect(sshTunnelHint('::1', 8661)).toBe('ssh -L 8661:[::1]:8661');
    expect(sshTunnelHint('[::1]', 8661)).toBe('ssh -L 8661:[::1]:8661');
    expect(sshTunnelHint('localhost', 9000)).toBe('ssh -L 9000:localhost:9000');
  });

  it('puts this machine\'s name in the URL of a wildcard address, and brackets around IPv6', () => {
    expect(urlHostOf('0.0.0.0')).toBe(os.hostname());
    expect(urlHostOf('::')).toBe(os.hostname());
    expect(urlHostOf('192.168.1.5')).toBe('192.168.1.5');
    expect(urlHostOf('fe80::1')).toBe('[fe80::1]');
    expect(urlHostOf('127.0.0.1')).toBe('127.0.0.1');
  });
});

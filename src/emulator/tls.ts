/**
 * A throwaway self-signed certificate for `tls: true`, made with the openssl CLI (node:crypto
 * cannot issue X.509 certificates). The certificate is its own CA, so kubeconfigs carry it as
 * `certificate-authority-data`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A PEM certificate and its private key. */
export interface SelfSignedCert {
  certPem: string;
  keyPem: string;
}

/** Error when no certificate could be made (openssl missing or failing). */
export class CertificateError extends Error {
  override name = 'CertificateError';
}

/** Creates a certificate valid for 127.0.0.1, ::1, localhost and `host`. */
export async function createSelfSignedCert(host: string): Promise<SelfSignedCert> {
  const dir = await mkdtemp(join(tmpdir(), 'phaselog-emulator-tls-'));
  try {
    const sans = new Set(['IP:127.0.0.1', 'IP:::1', 'DNS:localhost']);
    sans.add(/^[\d.]+$/.test(host) || host.includes(':') ? `IP:${host}` : `DNS:${host}`);
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '30',
      '-subj',
      '/CN=phaselog-emulator',
      '-addext',
      `subjectAltName=${[...sans].join(',')}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,digitalSignature,keyCertSign',
      '-addext',
      'extendedKeyUsage=serverAuth',
    ]);
    return { certPem: await readFile(certPath, 'utf8'), keyPem: await readFile(keyPath, 'utf8') };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new CertificateError(
      err.code === 'ENOENT'
        ? 'tls: true needs the openssl command, which was not found on PATH'
        : `openssl failed to create a certificate: ${err.message}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

import { readFileSync } from 'node:fs';
import type { Config } from '../../config/config.ts';

/** TLS settings in the shape both `Connection.connect` and `NativeConnection.connect` take (`tls`). */
export type TemporalTls = {
  serverNameOverride?: string;
  serverRootCACertificate?: Buffer;
  clientCertPair?: { crt: Buffer; key: Buffer };
};

/** What every connection to the Temporal frontend is opened with: its address, TLS and API key. */
export type TemporalConnectOptions = { address: string; tls?: TemporalTls; apiKey?: string };

/**
 * The connection options of TEMPORAL_ADDRESS and the TEMPORAL_TLS_* / TEMPORAL_API_KEY settings:
 * TLS when TEMPORAL_TLS is true, a TLS file is named or an API key is set (an API key is never
 * sent in clear text); the CA and the client certificate pair read from their files now, so a
 * missing or unreadable file stops the process at start naming the setting. Plain TCP otherwise.
 */
export function temporalConnectOptions(config: Config): TemporalConnectOptions {
  if (!config.TEMPORAL_ADDRESS) throw new Error('TEMPORAL_ADDRESS is not set');
  const wantsTls = config.TEMPORAL_TLS || config.TEMPORAL_TLS_CA !== undefined || config.TEMPORAL_TLS_CERT !== undefined
    || config.TEMPORAL_TLS_SERVER_NAME !== undefined || config.TEMPORAL_API_KEY !== undefined;
  const options: TemporalConnectOptions = { address: config.TEMPORAL_ADDRESS };
  if (wantsTls) {
    const tls: TemporalTls = {};
    if (config.TEMPORAL_TLS_SERVER_NAME) tls.serverNameOverride = config.TEMPORAL_TLS_SERVER_NAME;
    if (config.TEMPORAL_TLS_CA) tls.serverRootCACertificate = readSetting('TEMPORAL_TLS_CA', config.TEMPORAL_TLS_CA);
    if (config.TEMPORAL_TLS_CERT && config.TEMPORAL_TLS_KEY) {
      tls.clientCertPair = { crt: readSetting('TEMPORAL_TLS_CERT', config.TEMPORAL_TLS_CERT), key: readSetting('TEMPORAL_TLS_KEY', config.TEMPORAL_TLS_KEY) };
    }
    options.tls = tls;
  }
  if (config.TEMPORAL_API_KEY) options.apiKey = config.TEMPORAL_API_KEY;
  return options;
}

function readSetting(name: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new Error(`${name}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
}

import type { Bridge } from '../../common/bridge';
import { isCaptureUrl } from '../../common/capture-url';
import { isBareCid } from '../../common/cid';
import type { NotaryClient } from '../../common/client';
import { ClientError } from '../../common/errors';

/** The web bridge's document and public-lookup methods. */
export type WebDocuments = Pick<
  Bridge,
  | 'publicVerify'
  | 'publicDocument'
  | 'onchainInfo'
  | 'listDocuments'
  | 'getDocument'
  | 'compareHash'
  | 'importIpfs'
  | 'gatewayLink'
  | 'captureWeb'
  | 'acceptInvitation'
  | 'listMonitors'
  | 'getMonitor'
  | 'createMonitor'
  | 'cancelMonitor'
>;

/**
 * The service's document calls, straight through `client`, with the input checks Electron main's IPC schema
 * makes (hashes lower-cased, a bare CID, an http(s) address to capture).
 */
export function webDocuments(client: NotaryClient): WebDocuments {
  return {
    publicVerify: (hash) => client.publicVerify(hash.toLowerCase()),
    publicDocument: (serial) => client.publicDocument(serial.trim()),
    onchainInfo: () => client.onchainInfo(),
    listDocuments: (request) => client.listDocuments(request),
    getDocument: (id) => client.getDocument(id),
    compareHash: (id, hash) => client.compareHash(id, hash.toLowerCase()),
    importIpfs: async (request) => {
      // The same check as Electron main's IPC schema: a malformed CID never reaches the server.
      if (!isBareCid(request.cid)) {
        throw new ClientError({ kind: 'invalid-input', message: 'Not a bare CID (Qm… or b…)' });
      }
      return client.importIpfs(request);
    },
    gatewayLink: (id) => client.gatewayLink(id),
    captureWeb: async (request) => {
      // The same check as Electron main's IPC schema: a non-http(s) address never reaches the server.
      if (!isCaptureUrl(request.url)) {
        throw new ClientError({ kind: 'invalid-input', message: 'Not an http(s) URL without credentials' });
      }
      return client.captureWeb(request);
    },
    acceptInvitation: (invitationId) => client.acceptInvitation(invitationId),
    listMonitors: () => client.listMonitors(),
    getMonitor: (id) => client.getMonitor(id),
    createMonitor: async (request) => {
      // As for a capture: a non-http(s) address never reaches the server.
      if (!isCaptureUrl(request.url)) {
        throw new ClientError({ kind: 'invalid-input', message: 'Not an http(s) URL without credentials' });
      }
      return client.createMonitor(request);
    },
    cancelMonitor: (id) => client.cancelMonitor(id),
  };
}

import type { OnchainInfoDto } from '@notary/shared';
import { createContext, useContext } from 'react';
import type { AppSettings, Bridge, SessionInfo } from '../common/bridge';
import type { UploadQueue } from './upload-queue';

export interface AppContextValue {
  bridge: Bridge;
  /** The notarization queue (survives moving between screens). */
  queue: UploadQueue;
  settings: AppSettings;
  /** The signed-in session, or null on public screens. */
  session: SessionInfo | null;
  /** Chains announced by the server (links); null until loaded or when the server is unreachable. */
  onchainInfo: OnchainInfoDto | null;
  /** A call met `session-expired`: show the sign-in screen with the "expired" notice. */
  onSessionLost: () => void;
  setSession: (session: SessionInfo) => void;
  setSettings: (settings: AppSettings) => void;
}

export const AppContext = createContext<AppContextValue | null>(null);

export function useApp(): AppContextValue {
  const value = useContext(AppContext);
  if (!value) throw new Error('useApp outside AppContext');
  return value;
}

/** The context, or null outside the provider (screens shown before the settings are loaded). */
export function useOptionalApp(): AppContextValue | null {
  return useContext(AppContext);
}

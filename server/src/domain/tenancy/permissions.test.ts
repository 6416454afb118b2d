/**
 * The permission entry: who holds what (spec, Authentication: items 5 and 6) and the one sentence each refusal says.
 */
import { AppError, type Permission, ROLES, type Role } from '@notary/shared';
import { describe, expect, it } from 'vitest';
import { hasPermission, refusalMessage, requirePermission } from './permissions';

const asker = (role: Role, userId = 'u-1') => ({ role, userId });

describe('requirePermission', () => {
  it('follows the roles table', () => {
    const table: Record<Permission, Role[]> = {
      upload: ['owner', 'admin', 'editor'],
      recordActs: ['owner', 'admin', 'editor'],
      deleteTeamDocs: ['owner', 'admin'],
      manageTeam: ['owner', 'admin'],
      manageSettings: ['owner', 'admin'],
    };
    for (const [permission, holders] of Object.entries(table) as [Permission, Role[]][]) {
      for (const role of ROLES) {
        expect(hasPermission(asker(role), permission), `${role} ${permission}`).toBe(holders.includes(role));
      }
    }
  });

  it('owns a document: admins and owners, or its uploader while editor or higher', () => {
    const doc = { uploaderUserId: 'u-1' };
    expect(hasPermission(asker('editor', 'u-1'), { documentOwner: doc })).toBe(true);
    expect(hasPermission(asker('reader', 'u-1'), { documentOwner: doc })).toBe(false);
    expect(hasPermission(asker('editor', 'u-2'), { documentOwner: doc })).toBe(false);
    expect(hasPermission(asker('admin', 'u-2'), { documentOwner: doc })).toBe(true);
    expect(hasPermission(asker('owner', 'u-2'), { documentOwner: doc })).toBe(true);
  });

  it('refuses with FORBIDDEN and one sentence naming the role, the action and who may', () => {
    const refused = (() => {
      try {
        requirePermission(asker('reader'), 'upload', 'upload documents to this organization');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('FORBIDDEN');
    expect((refused as AppError).message).toBe(
      'Your role (reader) cannot upload documents to this organization: it takes editor or higher.',
    );
    expect(() => requirePermission(asker('editor'), 'upload', 'upload documents')).not.toThrow();
  });

  it('says each refusal in one sentence', () => {
    expect(refusalMessage('editor', 'manageTeam', "manage this organization's team")).toBe(
      "Your role (editor) cannot manage this organization's team: it takes admin or higher.",
    );
    expect(refusalMessage('reader', 'manageSettings', "manage this organization's acervo token")).toBe(
      "Your role (reader) cannot manage this organization's acervo token: it takes admin or higher.",
    );
    expect(refusalMessage('editor', 'deleteTeamDocs', 'delete team documents')).toBe(
      'Your role (editor) cannot delete team documents: it takes admin or higher.',
    );
    expect(
      refusalMessage(
        'editor',
        { documentOwner: { uploaderUserId: 'u-2' } },
        'manage how this document is shared',
      ),
    ).toBe(
      'Your role (editor) cannot manage how this document is shared: it takes its uploader (while editor or higher), an admin or an owner.',
    );
    for (const role of ROLES) {
      for (const permission of [
        'upload',
        'recordActs',
        'deleteTeamDocs',
        'manageTeam',
        'manageSettings',
      ] as const) {
        const sentence = refusalMessage(role, permission, 'do it');
        expect(sentence).toMatch(/^Your role \(\w+\) cannot do it: it takes \w+ or higher\.$/);
        expect(sentence.split('. ')).toHaveLength(1);
      }
    }
  });
});

// The key switches of SPEC "Authentication" item 2. Every switch is off until turned on.
export const PERMISSIONS = [
  'embeddings',
  'audio',
  'image_generation',
  'files',
  'decisions',
  'code_interpreter',
  'function_calling',
  'file_search',
  'remote_mcp',
  'skills',
  'mcp',
  'moderate',
  'ai_gateway',
  'agent_tools',
  'plans',
  'blackbox_record',
  'blackbox_write',
  'blackbox_read',
  'blackbox_content',
  'blackbox_manage',
] as const;

export type Permission = (typeof PERMISSIONS)[number];
export type PermissionSet = Record<Permission, boolean>;

export function noPermissions(): PermissionSet {
  return Object.fromEntries(PERMISSIONS.map((p) => [p, false])) as PermissionSet;
}

export function allPermissions(): PermissionSet {
  return Object.fromEntries(PERMISSIONS.map((p) => [p, true])) as PermissionSet;
}

/**
 * Every capability on, and the switches that restrict rather than allow off: the key a
 * first start makes. Moderate requests is a restriction an operator turns on for a key;
 * on by default, every request of the default key would pay for moderation.
 */
export function firstKeyPermissions(): PermissionSet {
  return { ...allPermissions(), moderate: false };
}

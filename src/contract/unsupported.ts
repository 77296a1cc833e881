// Endpoint families that are not offered (SPEC "What the service does" item 8): every
// method and sub-path answers 404 unsupported_endpoint.
export const UNSUPPORTED_FAMILIES = [
  'realtime',
  'assistants',
  'threads',
  'fine_tuning',
  'fine-tunes',
  'evals',
  'videos',
  'uploads',
  'chatkit',
  'edits',
  'engines',
  'webhooks',
  'admin',
  'organization',
  'live',
  'safety',
  'content_provenance_checks',
] as const;

export const UNSUPPORTED_NOTES: Record<string, string> = {
  uploads: 'multi-part uploads are not offered; use /files',
  edits: 'retired by the reference API',
  engines: 'retired by the reference API',
  webhooks: 'no outgoing notifications are sent',
};

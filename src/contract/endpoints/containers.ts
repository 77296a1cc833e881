// Container endpoints (SPEC "Containers, vector stores, skills"; Container resource: name 200
// characters, 50 file_ids, idle expiry 1 to 60 minutes (default 20), no network, 64 MB, 1,000 files).
import { z } from 'zod';
import { applied, binaryContentSchema, deletionSchema, fileUpload, limited, listQueryFields, listSchema, MB, needs, objectId, storedText } from '../fields.ts';
import { defineEndpoint } from '../types.ts';
import { MAX_SKILLS } from './responses-tools.ts';

const skillReferenceSchema = z.object({
  type: z.literal('skill_reference'),
  skill_id: objectId().pipe(z.string().max(64)),
  version: z
    .string()
    .regex(/^([1-9]\d{0,15}|latest)$/, 'version is a version number or latest')
    .optional()
    .describe('omitted: the skill default_version'),
});

const expiresAfterSchema = z.object({
  anchor: z.literal('last_active_at'),
  minutes: z.number().int().min(1).max(60),
});

export const containerSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('container'),
    name: z.string(),
    created_at: z.number().int(),
    status: z.string(),
    last_active_at: z.number().int().optional(),
    expires_after: z.looseObject({ anchor: z.literal('last_active_at'), minutes: z.number().int() }).optional(),
    memory_limit: z.enum(['1g', '4g', '16g', '64g']).optional(),
    network_policy: z.looseObject({ type: z.enum(['allowlist', 'disabled']), allowed_domains: z.array(z.string()).optional() }).optional(),
  })
  .meta({ id: 'Container' });

export const containerFileSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('container.file'),
    container_id: z.string(),
    created_at: z.number().int(),
    bytes: z.number().int(),
    path: z.string().describe('/mnt/data/<name>'),
    source: z.string().describe('user or assistant'),
  })
  .meta({ id: 'ContainerFile' });

const containerParams = { container_id: z.string() };
const containerFileParams = { container_id: z.string(), file_id: z.string() };
const permission = 'code_interpreter' as const;
const family = 'containers';

export const createContainer = defineEndpoint({
  operationId: 'CreateContainer',
  method: 'POST',
  path: '/containers',
  family,
  summary: 'Creates a container for code runs.',
  permission,
  body: {
    type: 'json',
    required: ['name'],
    fields: {
      name: applied(storedText(200).pipe(z.string().min(1)), 'up to 200 characters'),
      file_ids: applied(z.array(objectId()).max(50, 'at most 50 file_ids'), 'up to 50 uploaded files copied into /mnt/data'),
      expires_after: applied(expiresAfterSchema, '{anchor: last_active_at, minutes: 1 to 60}; default 20 minutes'),
      skills: needs(
        'skills',
        applied(
          z.array(skillReferenceSchema).max(MAX_SKILLS, `at most ${MAX_SKILLS} skills`),
          `up to ${MAX_SKILLS} skill_reference entries, each mounted read-only at /mnt/skills/<name> (the version named, or the default, pinned at create); needs the Skills switch; inline skills are not offered`,
        ),
      ),
      memory_limit: limited(['1g']),
      network_policy: limited([{ type: 'disabled' }], 'containers have no network'),
    },
  },
  response: { schema: containerSchema },
  notes: [
    'no network; 64 MB; 1,000 files; each program runs up to 30 seconds',
    'expires after expires_after minutes without use (default 20, up to 60)',
  ],
});

export const listContainers = defineEndpoint({
  operationId: 'ListContainers',
  method: 'GET',
  path: '/containers',
  family,
  summary: "Lists the account's containers.",
  permission,
  query: { ...listQueryFields('desc'), name: applied(storedText(200).pipe(z.string().min(1)), 'only containers with this name') },
  response: { schema: listSchema(containerSchema) },
});

export const retrieveContainer = defineEndpoint({
  operationId: 'RetrieveContainer',
  method: 'GET',
  path: '/containers/{container_id}',
  family,
  summary: 'Retrieves one container.',
  permission,
  params: containerParams,
  response: { schema: containerSchema },
});

export const deleteContainer = defineEndpoint({
  operationId: 'DeleteContainer',
  method: 'DELETE',
  path: '/containers/{container_id}',
  family,
  summary: 'Deletes a container and its files.',
  permission,
  params: containerParams,
  response: { schema: deletionSchema('container.deleted') },
});

export const createContainerFile = defineEndpoint({
  operationId: 'CreateContainerFile',
  method: 'POST',
  path: '/containers/{container_id}/files',
  family,
  summary: 'Adds a file to a container: a multipart upload, or a JSON file_id copying an uploaded file.',
  permission,
  params: containerParams,
  body: {
    // Also accepted as JSON {file_id} (the openai SDK sends it so); exactly one of `file` and `file_id`.
    type: 'multipart',
    alsoJson: true,
    fields: {
      file: fileUpload('up to 20 MB, placed at /mnt/data/<name>', { maxBytes: 20 * MB }),
      file_id: applied(objectId(), 'copies an uploaded file (also as a JSON body)'),
    },
  },
  response: { schema: containerFileSchema },
  notes: ['send exactly one of file (multipart, up to 20 MB) and file_id (JSON or multipart)', 'a container holds up to 1,000 files'],
});

export const listContainerFiles = defineEndpoint({
  operationId: 'ListContainerFiles',
  method: 'GET',
  path: '/containers/{container_id}/files',
  family,
  summary: "Lists a container's files.",
  permission,
  params: containerParams,
  query: listQueryFields('desc'),
  response: { schema: listSchema(containerFileSchema) },
});

export const retrieveContainerFile = defineEndpoint({
  operationId: 'RetrieveContainerFile',
  method: 'GET',
  path: '/containers/{container_id}/files/{file_id}',
  family,
  summary: 'Retrieves one container file.',
  permission,
  params: containerFileParams,
  response: { schema: containerFileSchema },
});

export const deleteContainerFile = defineEndpoint({
  operationId: 'DeleteContainerFile',
  method: 'DELETE',
  path: '/containers/{container_id}/files/{file_id}',
  family,
  summary: 'Deletes a file from a container.',
  permission,
  params: containerFileParams,
  response: { schema: deletionSchema('container.file.deleted') },
});

export const retrieveContainerFileContent = defineEndpoint({
  operationId: 'RetrieveContainerFileContent',
  method: 'GET',
  path: '/containers/{container_id}/files/{file_id}/content',
  family,
  summary: "Returns a container file's content.",
  permission,
  params: containerFileParams,
  response: { schema: binaryContentSchema, alternate: 'binary', contentType: 'application/octet-stream' },
});

export const containersEndpoints = [
  createContainer,
  listContainers,
  retrieveContainer,
  deleteContainer,
  createContainerFile,
  listContainerFiles,
  retrieveContainerFile,
  deleteContainerFile,
  retrieveContainerFileContent,
];

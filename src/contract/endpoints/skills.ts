// Skill endpoints (SPEC "Containers, vector stores, skills"; Skill resource: a SKILL.md with name and
// description front matter, files named by path or one zip, 500 files, 25 MB unpacked; versions are
// numbers sent and returned as text).
import { z } from 'zod';
import { applied, binaryContentSchema, deletionSchema, fileUploads, formBooleanSchema, listQueryFields, listSchema, MB } from '../fields.ts';
import { defineEndpoint } from '../types.ts';

const versionSchema = z.string().regex(/^[1-9]\d*$/, 'a version is a positive whole number, sent as text');

export const skillSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('skill'),
    name: z.string(),
    description: z.string(),
    created_at: z.number().int(),
    default_version: z.string(),
    latest_version: z.string(),
  })
  .meta({ id: 'Skill' });

export const skillVersionSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('skill.version'),
    skill_id: z.string(),
    version: z.string(),
    created_at: z.number().int(),
    name: z.string(),
    description: z.string(),
  })
  .meta({ id: 'SkillVersion' });

const FILES_NOTE = 'a SKILL.md (name and description front matter) and its files, each named by its path, or one zip; up to 500 files and 25 MB unpacked';
const LIMITS_NOTE = 'up to 500 files and 25 MB unpacked';
const skillParams = { skill_id: z.string() };
const versionParams = { skill_id: z.string(), version: versionSchema };
const permission = 'skills' as const;
const family = 'skills';
const zip = { schema: binaryContentSchema, alternate: 'binary', contentType: 'application/zip' } as const;

export const createSkill = defineEndpoint({
  operationId: 'CreateSkill',
  method: 'POST',
  path: '/skills',
  family,
  summary: 'Creates a skill from its files; they become version 1.',
  permission,
  body: { type: 'multipart', required: ['files'], fields: { files: fileUploads(FILES_NOTE, 500, 25 * MB) } },
  response: { schema: skillSchema },
  notes: [LIMITS_NOTE, 'mounted read-only at /mnt/skills/<name> in containers that reference it'],
});

export const listSkills = defineEndpoint({
  operationId: 'ListSkills',
  method: 'GET',
  path: '/skills',
  family,
  summary: "Lists the account's skills.",
  permission,
  query: listQueryFields('desc'),
  response: { schema: listSchema(skillSchema) },
});

export const getSkill = defineEndpoint({
  operationId: 'GetSkill',
  method: 'GET',
  path: '/skills/{skill_id}',
  family,
  summary: 'Retrieves one skill.',
  permission,
  params: skillParams,
  response: { schema: skillSchema },
});

export const updateSkillDefaultVersion = defineEndpoint({
  operationId: 'UpdateSkillDefaultVersion',
  method: 'POST',
  path: '/skills/{skill_id}',
  family,
  summary: 'Sets the version mounted when none is named.',
  permission,
  params: skillParams,
  body: {
    type: 'json',
    required: ['default_version'],
    fields: { default_version: applied(versionSchema, 'an existing version number, as text') },
  },
  response: { schema: skillSchema },
});

export const deleteSkill = defineEndpoint({
  operationId: 'DeleteSkill',
  method: 'DELETE',
  path: '/skills/{skill_id}',
  family,
  summary: 'Deletes a skill and all its versions.',
  permission,
  params: skillParams,
  response: { schema: deletionSchema('skill.deleted') },
});

export const getSkillContent = defineEndpoint({
  operationId: 'GetSkillContent',
  method: 'GET',
  path: '/skills/{skill_id}/content',
  family,
  summary: "Downloads the default version's files as a zip.",
  permission,
  params: skillParams,
  response: zip,
});

export const createSkillVersion = defineEndpoint({
  operationId: 'CreateSkillVersion',
  method: 'POST',
  path: '/skills/{skill_id}/versions',
  family,
  summary: 'Adds a version to a skill.',
  permission,
  params: skillParams,
  body: {
    type: 'multipart',
    required: ['files'],
    fields: {
      files: fileUploads(FILES_NOTE, 500, 25 * MB),
      default: applied(formBooleanSchema, 'true makes the new version the default'),
    },
  },
  response: { schema: skillVersionSchema },
  notes: [LIMITS_NOTE],
});

export const listSkillVersions = defineEndpoint({
  operationId: 'ListSkillVersions',
  method: 'GET',
  path: '/skills/{skill_id}/versions',
  family,
  summary: "Lists a skill's versions by version number.",
  permission,
  params: skillParams,
  query: listQueryFields('desc'),
  response: { schema: listSchema(skillVersionSchema) },
});

export const getSkillVersion = defineEndpoint({
  operationId: 'GetSkillVersion',
  method: 'GET',
  path: '/skills/{skill_id}/versions/{version}',
  family,
  summary: 'Retrieves one skill version.',
  permission,
  params: versionParams,
  response: { schema: skillVersionSchema },
});

export const deleteSkillVersion = defineEndpoint({
  operationId: 'DeleteSkillVersion',
  method: 'DELETE',
  path: '/skills/{skill_id}/versions/{version}',
  family,
  summary: 'Deletes one skill version.',
  permission,
  params: versionParams,
  response: { schema: deletionSchema('skill.version.deleted').extend({ version: z.string() }) },
});

export const getSkillVersionContent = defineEndpoint({
  operationId: 'GetSkillVersionContent',
  method: 'GET',
  path: '/skills/{skill_id}/versions/{version}/content',
  family,
  summary: "Downloads one version's files as a zip.",
  permission,
  params: versionParams,
  response: zip,
});

export const skillsEndpoints = [
  createSkill,
  listSkills,
  getSkill,
  updateSkillDefaultVersion,
  deleteSkill,
  getSkillContent,
  createSkillVersion,
  listSkillVersions,
  getSkillVersion,
  deleteSkillVersion,
  getSkillVersionContent,
];

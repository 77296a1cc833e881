// The skill endpoints (SPEC "Containers, vector stores, skills"; the key's Skills switch).
// The contract has checked the form (at most 500 file parts, 25 MB in total); the upload
// is checked as a skill (skill-upload.ts) before anything is kept. Another account's skill
// is 404 like an unknown one. The default version cannot be deleted: point the default at
// another version first, or delete the skill (so a skill always has a version to mount).
import JSZip from 'jszip';
import {
  createSkill,
  createSkillVersion,
  deleteSkill,
  deleteSkillVersion,
  getSkill,
  getSkillContent,
  getSkillVersion,
  getSkillVersionContent,
  listSkills,
  listSkillVersions,
  updateSkillDefaultVersion,
} from '../../contract/endpoints/skills.ts';
import type { UploadedFile } from '../../contract/form.ts';
import { invalidRequest, notFound } from '../../errors.ts';
import { stillThere } from '../still-there.ts';
import type { Router } from '../../http/router.ts';
import { MAX_BYTES } from './skill-files.ts';
import { takeUpload } from './skill-upload.ts';
import type { SkillFileEntry, Skills } from './skills-store.ts';
import { pageOptions } from '../list-page.ts';
import type { SkillVersionsTable } from '../../store/schema.ts';

const missingSkill = (id: string) => notFound(`No skill found with id '${id}'.`, 'skill_id');
const missingVersion = (id: string, version: string) => notFound(`The skill '${id}' has no version '${version}'.`, 'version');

/** The version's files as a zip under a folder named after the skill (uploading it again gives the same files). */
async function zipOf(skills: Skills, version: SkillVersionsTable): Promise<Buffer> {
  const zip = new JSZip();
  const folder = zip.folder(version.name)!;
  let total = 0;
  for (const f of JSON.parse(version.manifest) as SkillFileEntry[]) {
    const chunks: Buffer[] = [];
    for await (const chunk of await skills.blobs.get(f.blob_key)) chunks.push(chunk as Buffer);
    const data = Buffer.concat(chunks);
    total += data.length;
    if (total > MAX_BYTES) throw new Error(`skill version ${version.id} holds more than ${MAX_BYTES} bytes`);
    folder.file(f.path, data, { unixPermissions: 0o644 });
  }
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 6 }, platform: 'UNIX' });
}

export function skillsRoutes(router: Router, skills: Skills): void {
  /** Checks and stores an upload, runs `keep` with it; the stored blobs go if `keep` fails. */
  const withUpload = async <T>(field: UploadedFile | UploadedFile[], keep: (upload: Awaited<ReturnType<typeof takeUpload>>) => Promise<T>): Promise<T> => {
    const upload = await takeUpload(skills.blobs, field);
    try {
      return await keep(upload);
    } catch (err) {
      await skills.deleteBlobs(upload.files);
      throw err;
    }
  };

  router.endpoint(createSkill, async ({ body, key }) =>
    withUpload(body.files as UploadedFile | UploadedFile[], async ({ front, files }) => {
      const row = await skills.create(key.accountId, front, files);
      return skills.object(row, 1);
    }),
  );

  router.endpoint(listSkills, async ({ query, key }) => skills.list(key.accountId, pageOptions(query)));

  router.endpoint(getSkill, async ({ params, key }) => {
    const skill = await skills.get(key.accountId, params.skill_id!);
    if (!skill) throw missingSkill(params.skill_id!);
    return skill;
  });

  router.endpoint(updateSkillDefaultVersion, async ({ params, body, key }) => {
    const id = params.skill_id!;
    const version = body.default_version as string;
    const result = await skills.setDefault(key.accountId, id, version);
    if (result === 'no_skill') throw missingSkill(id);
    if (result === 'no_version') throw invalidRequest(`The skill '${id}' has no version '${version}'.`, 'default_version');
    return stillThere(await skills.get(key.accountId, id), () => missingSkill(id));
  });

  router.endpoint(deleteSkill, async ({ params, key }) => {
    if (!(await skills.delete(key.accountId, params.skill_id!))) throw missingSkill(params.skill_id!);
    return { id: params.skill_id!, object: 'skill.deleted', deleted: true };
  });

  const sendZip = async (reply: Parameters<Parameters<typeof router.endpoint>[1]>[0]['reply'], version: SkillVersionsTable) => {
    const data = await zipOf(skills, version);
    reply.header('content-type', 'application/zip').header('content-disposition', `attachment; filename="${version.name}.zip"`).header('content-length', data.length);
    return reply.send(data);
  };

  router.endpoint(getSkillContent, async ({ params, key, reply }) => {
    const version = await skills.version(key.accountId, params.skill_id!);
    if (!version) throw missingSkill(params.skill_id!);
    return sendZip(reply, version);
  });

  // --- versions -------------------------------------------------------------------------

  router.endpoint(createSkillVersion, async ({ params, body, key }) => {
    const id = params.skill_id!;
    // Before the upload is unpacked: an unknown skill costs nothing.
    if (!(await skills.row(key.accountId, id))) throw missingSkill(id);
    return withUpload(body.files as UploadedFile | UploadedFile[], async ({ front, files }) => {
      const row = await skills.addVersion(key.accountId, id, front, files, body.default === true);
      if (!row) throw missingSkill(id);
      return skills.versionObject(row);
    });
  });

  router.endpoint(listSkillVersions, async ({ params, query, key }) => {
    const id = params.skill_id!;
    if (!(await skills.row(key.accountId, id))) throw missingSkill(id);
    const page = await skills.listVersions(key.accountId, id, pageOptions(query));
    if (page === 'no_cursor') throw invalidRequest('No version of this skill has that cursor id.', 'after');
    return page;
  });

  const versionOf = async (accountId: string, id: string, version: string) => {
    const row = await skills.version(accountId, id, version);
    if (row) return row;
    if (!(await skills.row(accountId, id))) throw missingSkill(id);
    throw missingVersion(id, version);
  };

  router.endpoint(getSkillVersion, async ({ params, key }) => skills.versionObject(await versionOf(key.accountId, params.skill_id!, params.version!)));

  router.endpoint(deleteSkillVersion, async ({ params, key }) => {
    const id = params.skill_id!;
    const version = params.version!;
    const result = await skills.deleteVersion(key.accountId, id, version);
    if (result === 'no_skill') throw missingSkill(id);
    if (result === 'no_version') throw missingVersion(id, version);
    if (result === 'is_default') throw invalidRequest(`Version '${version}' is the default version of the skill '${id}'; set another default first, or delete the skill.`, 'version');
    return { id: result.deleted.id, object: 'skill.version.deleted', deleted: true, version: String(result.deleted.version) };
  });

  router.endpoint(getSkillVersionContent, async ({ params, key, reply }) => sendZip(reply, await versionOf(key.accountId, params.skill_id!, params.version!)));
}

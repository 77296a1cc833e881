// The container endpoints (SPEC "Containers, vector stores, skills"; Container, Container
// file). The contract has checked every field and limit (memory_limit 1g, network
// disabled, the Code interpreter switch, Skills for `skills`); these handlers check what
// needs the database and the sandbox: the container and the uploaded files exist for
// this account (404 / 400 naming the field), the container has not expired, the sandbox
// runs on this host (503 saying why not), and file names are one plain path segment.
// Every use of a container (a file added, listed, read or removed) moves its
// last_active_at, from which its idle expiry counts.
import type { Readable } from 'node:stream';
import type { BlobStore } from '../../blobs/blob-store.ts';
import {
  createContainer,
  createContainerFile,
  deleteContainer,
  deleteContainerFile,
  listContainerFiles,
  listContainers,
  retrieveContainer,
  retrieveContainerFile,
  retrieveContainerFileContent,
} from '../../contract/endpoints/containers.ts';
import type { UploadedFile } from '../../contract/form.ts';
import { invalidRequest, notFound, serviceUnavailable } from '../../errors.ts';
import type { Router } from '../../http/router.ts';
import { SandboxLimitError, SandboxPathError, type ContainerHandle, type Sandbox } from '../../sandbox/types.ts';
import type { ContainersTable } from '../../store/schema.ts';
import { contentTypeFor } from '../files/content-type.ts';
import type { StoredFiles } from '../files/stored-files.ts';
import { DATA_ROOT, fileObject, type Containers } from './containers-store.ts';
import type { PageOptions } from '../list-page.ts';

export interface ContainerDeps {
  containers: Containers;
  /** undefined: code execution is not set up on this server (every route answers 503). */
  sandbox: Sandbox | undefined;
  /** Said in the 503 when `sandbox` is undefined. */
  noSandboxReason?: string;
  files: StoredFiles;
  blobs: BlobStore;
}

/** SPEC "Limits": a container holds at most 64 MB (so no uploaded file larger can be copied in). */
const CONTAINER_BYTES = 64 * 1024 * 1024;
const DEFAULT_EXPIRY_MINUTES = 20;
const CAPS = 'a container holds at most 64 MB and 1,000 files';

const missingContainer = (id: string) => notFound(`No container found with id '${id}'.`, 'container_id');
const missingFile = (id: string) => notFound(`No file found with id '${id}' in this container.`, 'file_id');

/** A file name placed at /mnt/data/<name>: one plain path segment. */
export function plainFileName(name: string, param: string): string {
  // eslint-disable-next-line no-control-regex
  const bad = name === '' || name === '.' || name === '..' || name.includes('/') || /[\x00-\x1f\x7f]/.test(name) || Buffer.byteLength(name) > 255;
  if (bad) {
    throw invalidRequest(
      `The file name ${JSON.stringify(name.slice(0, 300))} cannot be placed at /mnt/data/<name>: it must be one path segment of 1 to 255 bytes, without '/', control characters, '.' or '..'.`,
      param,
    );
  }
  return name;
}

function pageOf(query: Record<string, unknown>): PageOptions {
  return {
    ...(typeof query.limit === 'number' ? { limit: query.limit } : {}),
    ...(typeof query.after === 'string' ? { after: query.after } : {}),
    ...(query.order === 'asc' || query.order === 'desc' ? { order: query.order } : {}),
  };
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function containersRoutes(router: Router, deps: ContainerDeps): void {
  const { containers, files, blobs } = deps;

  /** The sandbox, if code can run on this host; 503 saying why not. */
  const sandboxOr503 = async (): Promise<Sandbox> => {
    const unavailable = (reason: string) => serviceUnavailable(`Code execution is not available on this server: ${reason}`);
    if (!deps.sandbox) throw unavailable(deps.noSandboxReason ?? 'no sandbox is configured.');
    const status = await deps.sandbox.status();
    if (!status.available) throw unavailable(status.reason ?? 'the sandbox cannot run.');
    return deps.sandbox;
  };

  /** The account's container, not expired, touched; 404 / 400 otherwise. */
  const usable = async (accountId: string, id: string): Promise<ContainersTable> => {
    const row = await containers.row(accountId, id);
    if (!row) throw missingContainer(id);
    if (containers.isExpired(row) || !(await containers.touch(id))) {
      throw invalidRequest(`Container ${id} has expired; create a new one.`, 'container_id');
    }
    return row;
  };

  /**
   * The container's directory on this host. A running container whose directory is
   * missing (the host's data directory was cleared) gets an empty one.
   */
  const handleOf = async (sandbox: Sandbox, id: string): Promise<ContainerHandle> => (await sandbox.open(id)) ?? sandbox.create(id);

  /** Writes a file into /mnt/data, turning the sandbox's refusals into 400s naming `param`. */
  const place = async (sandbox: Sandbox, handle: ContainerHandle, name: string, bytes: Uint8Array, param: string) => {
    try {
      return await sandbox.writeFile(handle, name, bytes);
    } catch (err) {
      if (err instanceof SandboxLimitError) throw invalidRequest(`The container cannot take '${name}': ${CAPS} (${err.message}).`, param);
      if (err instanceof SandboxPathError) throw invalidRequest(`The file name '${name}' cannot be used in a container: ${err.message}.`, param);
      throw err;
    }
  };

  /** An uploaded file of the account, its name checked, its bytes read (up to the container's cap). */
  const uploaded = async (accountId: string, fileId: string, param: string): Promise<{ name: string; content: Buffer }> => {
    const read = await files.read(accountId, fileId, CONTAINER_BYTES);
    if (read === undefined) throw invalidRequest(`No file found with id '${fileId}'.`, param);
    if (read === 'too_large') throw invalidRequest(`The file '${fileId}' is too large to copy into a container: ${CAPS}.`, param);
    return { name: plainFileName(read.file.filename, param), content: read.content };
  };

  // --- containers -----------------------------------------------------------------------

  router.endpoint(createContainer, async ({ body, key }) => {
    const sandbox = await sandboxOr503();
    const skills = body.skills ?? [];
    // The contract asked for the Skills switch; mounting waits for the skills family.
    if (skills.length > 0) throw invalidRequest('skills are not offered yet.', 'skills');
    const fileIds = [...new Set(body.file_ids ?? [])];
    // Every id must be the account's before anything is made.
    for (let i = 0; i < fileIds.length; i++) {
      if (!(await files.get(key.accountId, fileIds[i]!))) throw invalidRequest(`No file found with id '${fileIds[i]}'.`, `file_ids[${(body.file_ids ?? []).indexOf(fileIds[i]!)}]`);
    }
    const row = await containers.create(key.accountId, { name: body.name!, expiresAfterMinutes: body.expires_after?.minutes ?? DEFAULT_EXPIRY_MINUTES });
    try {
      const handle = await sandbox.create(row.id);
      for (const id of fileIds) {
        const param = `file_ids[${(body.file_ids ?? []).indexOf(id)}]`;
        const { name, content } = await uploaded(key.accountId, id, param);
        await containers.addFile(row, await place(sandbox, handle, name, content, param));
      }
    } catch (err) {
      // Nothing half-made is left: no directory, no rows.
      await sandbox.destroy(row.id).catch(() => undefined);
      await containers.delete(key.accountId, row.id);
      throw err;
    }
    return containers.object((await containers.row(key.accountId, row.id))!);
  });

  router.endpoint(listContainers, async ({ query, key }) => {
    await sandboxOr503();
    return containers.list(key.accountId, { ...pageOf(query), ...(typeof query.name === 'string' ? { name: query.name } : {}) });
  });

  router.endpoint(retrieveContainer, async ({ params, key }) => {
    await sandboxOr503();
    const row = await containers.row(key.accountId, params.container_id!);
    if (!row) throw missingContainer(params.container_id!);
    return containers.object(row);
  });

  router.endpoint(deleteContainer, async ({ params, key }) => {
    const sandbox = await sandboxOr503();
    const id = params.container_id!;
    if (!(await containers.row(key.accountId, id))) throw missingContainer(id);
    await sandbox.destroy(id);
    if (!(await containers.delete(key.accountId, id))) throw missingContainer(id);
    return { id, object: 'container.deleted', deleted: true };
  });

  // --- files ----------------------------------------------------------------------------

  router.endpoint(createContainerFile, async ({ params, body, key }) => {
    const sandbox = await sandboxOr503();
    const upload = body.file as UploadedFile | undefined;
    const fileId = body.file_id;
    if ((upload === undefined) === (fileId === undefined)) throw invalidRequest('Send exactly one of file (a multipart upload) and file_id.', upload === undefined ? 'file' : 'file_id');
    const row = await usable(key.accountId, params.container_id!);
    const handle = await handleOf(sandbox, row.id);
    let placed;
    if (upload) {
      const name = plainFileName(upload.filename, 'file');
      // The bytes go into the container; the staged blob is deleted either way.
      const blob = upload.claim();
      try {
        placed = await place(sandbox, handle, name, await readAll(await blobs.get(blob.key)), 'file');
      } finally {
        await blobs.delete(blob.key).catch(() => undefined);
      }
    } else {
      const { name, content } = await uploaded(key.accountId, fileId!, 'file_id');
      placed = await place(sandbox, handle, name, content, 'file_id');
    }
    return fileObject(await containers.addFile(row, placed));
  });

  router.endpoint(listContainerFiles, async ({ params, query, key }) => {
    const sandbox = await sandboxOr503();
    const row = await usable(key.accountId, params.container_id!);
    // Files a program wrote (or removed) since the last look.
    await containers.syncFiles(row, await sandbox.listFiles(await handleOf(sandbox, row.id)));
    return containers.listFiles(row.id, pageOf(query));
  });

  router.endpoint(retrieveContainerFile, async ({ params, key }) => {
    await sandboxOr503();
    const row = await usable(key.accountId, params.container_id!);
    const file = await containers.fileRow(key.accountId, row.id, params.file_id!);
    if (!file) throw missingFile(params.file_id!);
    return fileObject(file);
  });

  router.endpoint(deleteContainerFile, async ({ params, key }) => {
    const sandbox = await sandboxOr503();
    const row = await usable(key.accountId, params.container_id!);
    const file = await containers.fileRow(key.accountId, row.id, params.file_id!);
    if (!file) throw missingFile(params.file_id!);
    await sandbox.removeFile(await handleOf(sandbox, row.id), file.path.slice(DATA_ROOT.length));
    await containers.removeFileRow(file.id);
    return { id: file.id, object: 'container.file.deleted', deleted: true };
  });

  router.endpoint(retrieveContainerFileContent, async ({ params, key, reply }) => {
    const sandbox = await sandboxOr503();
    const row = await usable(key.accountId, params.container_id!);
    const file = await containers.fileRow(key.accountId, row.id, params.file_id!);
    if (!file) throw missingFile(params.file_id!);
    const content = await sandbox.readFile(await handleOf(sandbox, row.id), file.path.slice(DATA_ROOT.length));
    if (!content) {
      // A program removed it (or made it a link): the row goes too.
      await containers.removeFileRow(file.id);
      throw missingFile(params.file_id!);
    }
    const name = file.path.slice(file.path.lastIndexOf('/') + 1);
    reply.header('content-type', contentTypeFor(name)).header('content-length', content.length);
    return reply.send(content);
  });
}

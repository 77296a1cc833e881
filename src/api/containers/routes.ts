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
import { invalidRequest, notFound } from '../../errors.ts';
import { stillThere } from '../still-there.ts';
import type { Router } from '../../http/router.ts';
import { contentTypeFor } from '../files/content-type.ts';
import { pageOptions } from '../list-page.ts';
import { plainFileName, type ContainerRuntime } from './container-runtime.ts';
import { fileObject } from './containers-store.ts';

export interface ContainerDeps {
  runtime: ContainerRuntime;
  blobs: BlobStore;
}

const missingContainer = (id: string) => notFound(`No container found with id '${id}'.`, 'container_id');
const missingFile = (id: string) => notFound(`No file found with id '${id}' in this container.`, 'file_id');

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function containersRoutes(router: Router, deps: ContainerDeps): void {
  const { runtime, blobs } = deps;
  const { containers } = runtime;

  // --- containers -----------------------------------------------------------------------

  router.endpoint(createContainer, async ({ body, key }) => {
    // Each id once, named by the first field that lists it.
    const ids = body.file_ids ?? [];
    const files = [...new Set(ids)].map((id) => ({ id, param: `file_ids[${ids.indexOf(id)}]` }));
    const row = await runtime.create(key.accountId, {
      name: body.name!,
      ...(body.expires_after ? { expiresAfterMinutes: body.expires_after.minutes } : {}),
      files,
      skills: (body.skills ?? []).map((ref, i) => ({ ref, param: `skills[${i}]` })),
    });
    return containers.object(stillThere(await containers.row(key.accountId, row.id), () => missingContainer(row.id)));
  });

  router.endpoint(listContainers, async ({ query, key }) => {
    await runtime.sandbox();
    return containers.list(key.accountId, { ...pageOptions(query), ...(typeof query.name === 'string' ? { name: query.name } : {}) });
  });

  router.endpoint(retrieveContainer, async ({ params, key }) => {
    await runtime.sandbox();
    const row = await containers.row(key.accountId, params.container_id!);
    if (!row) throw missingContainer(params.container_id!);
    return containers.object(row);
  });

  router.endpoint(deleteContainer, async ({ params, key }) => {
    await runtime.sandbox();
    const id = params.container_id!;
    if (!(await runtime.delete(key.accountId, id))) throw missingContainer(id);
    return { id, object: 'container.deleted', deleted: true };
  });

  // --- files ----------------------------------------------------------------------------

  router.endpoint(createContainerFile, async ({ params, body, key }) => {
    await runtime.sandbox();
    const upload = body.file as UploadedFile | undefined;
    const fileId = body.file_id;
    if ((upload === undefined) === (fileId === undefined)) throw invalidRequest('Send exactly one of file (a multipart upload) and file_id.', upload === undefined ? 'file' : 'file_id');
    const row = await runtime.usable(key.accountId, params.container_id!);
    let added;
    if (upload) {
      const name = plainFileName(upload.filename, 'file');
      // The bytes go into the container; the staged blob is deleted either way.
      const blob = upload.claim();
      try {
        added = await runtime.addFile(row, name, await readAll(await blobs.get(blob.key)), 'file');
      } finally {
        await blobs.delete(blob.key).catch(() => undefined);
      }
    } else {
      const { name, content } = await runtime.uploaded(key.accountId, fileId!, 'file_id');
      added = await runtime.addFile(row, name, content, 'file_id');
    }
    return fileObject(added);
  });

  router.endpoint(listContainerFiles, async ({ params, query, key }) => {
    await runtime.sandbox();
    const row = await runtime.usable(key.accountId, params.container_id!);
    // Files this host's copy holds that the rows do not yet (a run cut off before it kept them).
    await runtime.refresh(row);
    return containers.listFiles(row.id, pageOptions(query));
  });

  router.endpoint(retrieveContainerFile, async ({ params, key }) => {
    await runtime.sandbox();
    const row = await runtime.usable(key.accountId, params.container_id!);
    const file = await containers.fileRow(key.accountId, row.id, params.file_id!);
    if (!file) throw missingFile(params.file_id!);
    return fileObject(file);
  });

  router.endpoint(deleteContainerFile, async ({ params, key }) => {
    await runtime.sandbox();
    const row = await runtime.usable(key.accountId, params.container_id!);
    const file = await containers.fileRow(key.accountId, row.id, params.file_id!);
    if (!file) throw missingFile(params.file_id!);
    await runtime.removeFile(row, file);
    return { id: file.id, object: 'container.file.deleted', deleted: true };
  });

  router.endpoint(retrieveContainerFileContent, async ({ params, key, reply }) => {
    await runtime.sandbox();
    const row = await runtime.usable(key.accountId, params.container_id!);
    const file = await containers.fileRow(key.accountId, row.id, params.file_id!);
    if (!file) throw missingFile(params.file_id!);
    const content = await runtime.readFile(row, file);
    if (!content) throw missingFile(params.file_id!);
    const name = file.path.slice(file.path.lastIndexOf('/') + 1);
    reply.header('content-type', contentTypeFor(name)).header('content-length', content.length);
    return reply.send(content);
  });
}

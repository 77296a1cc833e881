// POST /images/generations (JSON), /images/edits and /images/variations (multipart; the
// upload is in the blob store when the handler runs, and discarded after the answer):
// the call (images-call.ts) reads the upload, holds the image's price, has the engine
// make it and answers the reference's ImagesResponse with `svc`.
import { createImage, createImageEdit, createImageVariation } from '../../contract/endpoints/images.ts';
import type { Router } from '../../http/router.ts';
import { createImages } from './images-call.ts';

export function imagesRoutes(router: Router): void {
  const services = router.services;
  router.endpoint(createImage, async ({ body, key, request, reply }) => (await createImages(services, request.state, key, 'generation', body)) ?? reply);
  router.endpoint(createImageEdit, async ({ body, key, request, reply }) => (await createImages(services, request.state, key, 'edit', body)) ?? reply);
  router.endpoint(createImageVariation, async ({ body, key, request, reply }) => (await createImages(services, request.state, key, 'variation', body)) ?? reply);
}

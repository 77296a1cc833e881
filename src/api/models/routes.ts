// GET /models lists the chat models the key may use; GET /models/{model} answers every
// model id of SPEC "Models".
import { CHAT_MODELS, findModel, type ModelInfo } from '../../contract/models.ts';
import { listModels, retrieveModel } from '../../contract/endpoints/models.ts';
import { notFound } from '../../errors.ts';
import type { Router } from '../../http/router.ts';

// A fixed creation time keeps the objects stable between runs and instances.
const CREATED = 1_767_225_600; // 2026-01-01T00:00:00Z

function modelObject(m: ModelInfo) {
  return { id: m.id, object: 'model' as const, created: CREATED, owned_by: m.group === 'chat' ? 'agent-api' : 'system' };
}

export function modelsRoutes(router: Router): void {
  router.endpoint(listModels, async ({ key }) => ({
    object: 'list',
    data: CHAT_MODELS.filter((id) => !key.models || key.models.includes(id)).map((id) => modelObject(findModel(id)!)),
  }));

  router.endpoint(retrieveModel, async ({ params, key }) => {
    const model = findModel(params.model ?? '');
    // A chat model the key may not use is as absent as an unknown one, as in the list.
    if (!model || (model.group === 'chat' && key.models && !key.models.includes(model.id))) {
      throw notFound(`The model '${params.model}' does not exist or you do not have access to it.`, 'model');
    }
    return modelObject(model);
  });
}

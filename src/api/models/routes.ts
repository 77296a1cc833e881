// GET /models lists the models the key may use; GET /models/{model} answers every model
// id of SPEC "Models" the key may use. A key without a model restriction lists the chat
// models (SPEC: "its agents, plus -think variants"); a restricted key lists exactly the
// models its restriction names, in the table's order (embedding ids included), since
// those are what it can call.
import { CHAT_MODELS, findModel, MODELS, type ModelInfo } from '../../contract/models.ts';
import { listModels, retrieveModel } from '../../contract/endpoints/models.ts';
import { notFound } from '../../errors.ts';
import type { Router } from '../../http/router.ts';

// A fixed creation time keeps the objects stable between runs and instances.
const CREATED = 1_767_225_600; // 2026-01-01T00:00:00Z

function modelObject(m: ModelInfo) {
  return { id: m.id, object: 'model' as const, created: CREATED, owned_by: m.group === 'chat' ? 'agent-api' : 'system' };
}

const CHAT_INFO = CHAT_MODELS.map((id) => findModel(id)!);

export function modelsRoutes(router: Router): void {
  router.endpoint(listModels, async ({ key }) => {
    const allowed = key.models;
    return { object: 'list', data: (allowed ? MODELS.filter((m) => allowed.includes(m.id)) : CHAT_INFO).map(modelObject) };
  });

  router.endpoint(retrieveModel, async ({ params, key }) => {
    const model = findModel(params.model ?? '');
    // A model the key may not use is as absent as an unknown one.
    if (!model || (key.models && !key.models.includes(model.id))) {
      throw notFound(`The model '${params.model}' does not exist or you do not have access to it.`, 'model');
    }
    return modelObject(model);
  });
}

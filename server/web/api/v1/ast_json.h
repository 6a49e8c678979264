// -----------------------------------------------------------------------------
// File: web/api/v1/ast_json.h
// -----------------------------------------------------------------------------
//
// /api/v1/parse_query's data: a PromQL tree as the JSON objects
// Prometheus's translateAST builds for its UI's tree view (keys sorted, as
// Go marshals maps).
#ifndef VIGIL_SERVER_WEB_API_V1_AST_JSON_H_
#define VIGIL_SERVER_WEB_API_V1_AST_JSON_H_

#include "promql/ast.h"
#include "server/web/api/v1/json.h"

namespace vigil::web::api {

void WriteAstJson(JsonWriter& w, const promql::Expr& e);

}  // namespace vigil::web::api

#endif  // VIGIL_SERVER_WEB_API_V1_AST_JSON_H_

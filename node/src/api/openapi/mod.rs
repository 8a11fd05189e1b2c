//! `GET /openapi.json`: the OpenAPI 3.1 description of the API, built with utoipa from the handlers' request,
//! query and response types (`ToSchema`/`IntoParams` derives) and the role table, once per process.

pub mod answers;
mod operations;

use std::sync::OnceLock;

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::path::{
    HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn, PathItem,
};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{ArrayBuilder, ComponentsBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::{
    ContentBuilder, InfoBuilder, OpenApi, OpenApiBuilder, PathsBuilder, Ref, RefOr, Required,
    ResponseBuilder,
};
use utoipa::{IntoParams, ToSchema};

use super::auth::table::ROUTES;
use super::error::ErrorBody;

/// Registers `GET /openapi.json`.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/openapi.json", web::get().to(serve));
}

async fn serve() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(json())
}

/// The spec as JSON text, built on first use.
pub fn json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| {
        spec()
            .to_pretty_json()
            .expect("an OpenAPI document always serializes")
    })
}

/// The OpenAPI document of every route of the role table.
pub fn spec() -> OpenApi {
    let mut spec = Spec::default();
    operations::describe(&mut spec);
    spec.finish()
}

/// The document being assembled: paths and every schema they refer to.
#[derive(Default)]
pub struct Spec {
    paths: Vec<(String, PathItem)>,
    schemas: Vec<(String, RefOr<Schema>)>,
}

impl Spec {
    /// A `$ref` to `T`'s schema, registering it and every schema it uses.
    pub fn schema<T: ToSchema>(&mut self) -> RefOr<Schema> {
        T::schemas(&mut self.schemas);
        self.schemas.push((T::name().into_owned(), T::schema()));
        Ref::from_schema_name(T::name()).into()
    }

    /// An array of `T`.
    pub fn list<T: ToSchema>(&mut self) -> RefOr<Schema> {
        ArrayBuilder::new().items(self.schema::<T>()).into()
    }

    /// Starts the operation `method path` (`path` exactly as in the role table).
    pub fn op(&mut self, method: &'static str, path: &'static str, summary: &str) -> Op<'_> {
        Op {
            spec: self,
            method,
            path,
            summary: summary.to_string(),
            query: Vec::new(),
            body: None,
            responses: Vec::new(),
        }
    }

    fn finish(self) -> OpenApi {
        let mut paths = PathsBuilder::new();
        for (path, item) in self.paths {
            paths = paths.path(path, item);
        }
        let mut components = ComponentsBuilder::new();
        for (name, schema) in self.schemas {
            components = components.schema(name, schema);
        }
        let mut error = ResponseBuilder::new().description(
            "An error: `{\"error\": {\"code\", \"message\"}}`, the same shape for every status.",
        );
        error = error.content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name(ErrorBody::name())))
                .build(),
        );
        let components = components
            .schema_from::<ErrorBody>()
            .schema_from::<super::error::ErrorDetail>()
            .response("Error", error.build());
        OpenApiBuilder::new()
            .info(
                InfoBuilder::new()
                    .title("convoy")
                    .version(crate::VERSION)
                    .description(Some(
                        "The HTTP API of a convoy server (docs/API.md). `x-permission` on each \
                         operation is what the caller's token must grant; `x-roles` the roles that grant it.",
                    )),
            )
            .paths(paths.build())
            .components(Some(components.build()))
            .build()
    }
}

/// One answer: status, description, and its media type and schema (none for an empty body).
type Answer = (u16, String, Option<(String, Option<RefOr<Schema>>)>);

/// One operation being described.
pub struct Op<'a> {
    spec: &'a mut Spec,
    method: &'static str,
    path: &'static str,
    summary: String,
    query: Vec<utoipa::openapi::path::Parameter>,
    body: Option<RefOr<Schema>>,
    responses: Vec<Answer>,
}

impl Op<'_> {
    /// Its query parameters, from the handler's query type.
    pub fn query<Q: IntoParams>(mut self) -> Self {
        self.query
            .extend(Q::into_params(|| Some(ParameterIn::Query)));
        self
    }

    /// Its JSON request body, of type `T`.
    pub fn body<T: ToSchema>(mut self) -> Self {
        self.body = Some(self.spec.schema::<T>());
        self
    }

    /// A JSON answer with status `status` and `schema`.
    pub fn answers(mut self, status: u16, what: &str, schema: RefOr<Schema>) -> Self {
        self.responses.push((
            status,
            what.to_string(),
            Some(("application/json".into(), Some(schema))),
        ));
        self
    }

    /// A JSON answer: an array of `T`.
    pub fn answers_list<T: ToSchema>(self, status: u16, what: &str) -> Self {
        let schema = self.spec.list::<T>();
        self.answers(status, what, schema)
    }

    /// A JSON answer of type `T`.
    pub fn json<T: ToSchema>(self, status: u16, what: &str) -> Self {
        let schema = self.spec.schema::<T>();
        self.answers(status, what, schema)
    }

    /// An answer that is not JSON: `content_type` text, or none.
    pub fn text(mut self, status: u16, what: &str, content_type: Option<&str>) -> Self {
        self.responses.push((
            status,
            what.to_string(),
            content_type.map(|c| {
                (
                    c.to_string(),
                    Some(ObjectBuilder::new().schema_type(Type::String).into()),
                )
            }),
        ));
        self
    }

    /// Adds the operation, with the error answers every route can give: its own `errors` plus 401/403
    /// unless it is public, 415 when it takes a body, 500 and 503.
    pub fn errors(self, errors: &[u16]) {
        let Op {
            spec,
            method,
            path,
            summary,
            query,
            body,
            responses,
        } = self;
        let rule = ROUTES
            .iter()
            .find(|r| r.method == method && r.pattern == path)
            .unwrap_or_else(|| panic!("{method} {path} is not in the role table"));
        let need = rule.need;
        let roles: Vec<&str> = convoy_actors::domain::Role::ALL
            .iter()
            .filter(|r| r.grants(need))
            .map(|r| r.name())
            .collect();
        let permission = serde_json::to_value(need).unwrap_or_default();
        let mut op = OperationBuilder::new()
            .operation_id(Some(format!("{method} {path}")))
            .summary(Some(summary))
            .description(Some(format!("Needs: {}.", rule.action)))
            .tag(
                path.split('/')
                    .nth(if path.starts_with("/v1/") { 2 } else { 1 })
                    .unwrap_or("")
                    .to_string(),
            )
            .extensions(Some(
                ExtensionsBuilder::new()
                    .add("x-permission", permission)
                    .add("x-roles", serde_json::json!(roles))
                    .build(),
            ));
        let mut params: Vec<_> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|name| {
                ParameterBuilder::new()
                    .name(name)
                    .parameter_in(ParameterIn::Path)
                    .required(Required::True)
                    .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
                    .build()
            })
            .collect();
        params.extend(query);
        op = op.parameters(Some(params));
        let takes_body = body.is_some();
        if let Some(schema) = body {
            op = op.request_body(Some(
                RequestBodyBuilder::new()
                    .content(
                        "application/json",
                        ContentBuilder::new().schema(Some(schema)).build(),
                    )
                    .required(Some(Required::True))
                    .build(),
            ));
        }
        for (status, what, content) in responses {
            let mut r = ResponseBuilder::new().description(what);
            if let Some((content_type, schema)) = content {
                r = r.content(content_type, ContentBuilder::new().schema(schema).build());
            }
            op = op.response(status.to_string(), r.build());
        }
        let mut all: Vec<u16> = errors.to_vec();
        if need != convoy_actors::domain::Permission::Public {
            all.extend([401, 403]);
        }
        if takes_body || method != "GET" {
            all.extend([413, 415]);
        }
        all.extend([500, 503]);
        all.sort_unstable();
        all.dedup();
        for status in all {
            op = op.response(status.to_string(), Ref::from_response_name("Error"));
        }
        let method = match method {
            "GET" => HttpMethod::Get,
            "POST" => HttpMethod::Post,
            "PUT" => HttpMethod::Put,
            "PATCH" => HttpMethod::Patch,
            "DELETE" => HttpMethod::Delete,
            other => panic!("no HTTP method {other}"),
        };
        spec.paths
            .push((path.to_string(), PathItem::new(method, op.build())));
    }
}

#[cfg(test)]
#[path = "openapi_test.rs"]
mod tests;

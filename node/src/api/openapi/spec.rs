//! The OpenAPI document being assembled: its paths and every schema they refer to. The route builder
//! (`api/route.rs`) names schemas through it; `openapi` adds each route's operation and finishes it.

use utoipa::openapi::path::PathItem;
use utoipa::openapi::schema::{ArrayBuilder, ComponentsBuilder, Schema};
use utoipa::openapi::{
    ContentBuilder, InfoBuilder, OpenApi, OpenApiBuilder, PathsBuilder, Ref, RefOr, ResponseBuilder,
};
use utoipa::ToSchema;

use crate::api::error::{ErrorBody, ErrorDetail};

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

    /// Adds the operation of a path.
    pub(super) fn add_path(&mut self, path: &str, item: PathItem) {
        self.paths.push((path.to_string(), item));
    }

    /// The document, with the error answer every operation refers to.
    pub(super) fn finish(self) -> OpenApi {
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
            .schema_from::<ErrorDetail>()
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

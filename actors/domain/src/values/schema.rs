//! OpenAPI schemas (utoipa) of the domain types whose JSON is written by hand rather than derived: ids are
//! strings, an actor is one string, a failed-node threshold is a count or a percentage string.

use crate::values::ids::{Actor, DeploymentId, GroupDeploymentId};
use crate::values::threshold::FailedNodes;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

fn string(pattern: Option<&str>, description: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(pattern)
        .description(Some(description))
        .into()
}

impl PartialSchema for DeploymentId {
    fn schema() -> RefOr<Schema> {
        string(Some("^d-[0-9]+$"), "A deployment id: `d-1`, `d-2`, ...")
    }
}
impl ToSchema for DeploymentId {}

impl PartialSchema for GroupDeploymentId {
    fn schema() -> RefOr<Schema> {
        string(
            Some("^g-[0-9]+$"),
            "A group deployment id: `g-1`, `g-2`, ...",
        )
    }
}
impl ToSchema for GroupDeploymentId {}

impl PartialSchema for Actor {
    fn schema() -> RefOr<Schema> {
        string(
            None,
            "Who caused an event: `user`, `pulse`, `timer`, `system`, or the name of an API token.",
        )
    }
}
impl ToSchema for Actor {}

impl PartialSchema for FailedNodes {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(0))
                    .description(Some("At most this many failed nodes.")),
            )
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some("^[0-9]+%$"))
                    .description(Some(
                        "At most this percentage of the deployment's nodes, `25%`.",
                    )),
            )
            .into()
    }
}
impl ToSchema for FailedNodes {}

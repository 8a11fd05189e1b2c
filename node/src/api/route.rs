//! One route of the API, declared once beside its handler: method, path pattern, the permission it needs
//! and the action in words, the handler, and its OpenAPI operation (summary, query, body, answers by
//! status, error statuses). The router (`api::configure`), the permission table (`auth::table`) and the
//! OpenAPI document (`openapi::spec`) are all read from these declarations.

use std::fmt;
use std::sync::Arc;

use actix_web::{Handler, Responder};
use convoy_actors::domain::Permission;
use utoipa::openapi::path::{Parameter, ParameterIn};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;
use utoipa::{IntoParams, ToSchema};

use super::openapi::spec::Spec;

/// Every route the API serves, in the order the first match decides, as `api::configure` registers
/// them (app data, `web::Data<Routes>`). The permission table, the metrics' route labels, `GET
/// /v1/whoami` and the OpenAPI document read them from the request, so that none of them imports the
/// collection (`api`) back.
#[derive(Clone, Copy, Debug)]
pub struct Routes(pub &'static [Route]);

impl Routes {
    /// The routes of the app serving `req`; none when it registered none (every path is then 404).
    pub fn of(req: &actix_web::HttpRequest) -> &'static [Route] {
        req.app_data::<actix_web::web::Data<Routes>>()
            .map_or(&[], |routes| routes.0)
    }
}

/// Adds the handler to an actix route (the method is already set).
type Register = Arc<dyn Fn(actix_web::Route) -> actix_web::Route + Send + Sync>;

/// A schema, registered in the spec being built (with every schema it uses) when called.
pub type SchemaOf = fn(&mut Spec) -> RefOr<Schema>;

/// What an answer carries.
#[derive(Clone, Copy)]
pub enum Content {
    /// JSON of this schema.
    Json(SchemaOf),
    /// Any JSON object (the OpenAPI document itself).
    AnyObject,
    /// Text of this media type, or no body at all.
    Text(Option<&'static str>),
    /// A stream of server-sent events (`text/event-stream`): each event's name and the schema of its
    /// JSON `data`.
    Events(EventsOf),
}

/// The events of a stream, their schemas registered in the spec being built when called.
pub type EventsOf = fn(&mut Spec) -> Vec<(&'static str, RefOr<Schema>)>;

/// One answer of an operation: its status, what it means, and what it carries.
#[derive(Clone, Copy)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// What the answer means.
    pub what: &'static str,
    /// Its body.
    pub content: Content,
}

/// One route: who may call it, what handles it, and how the OpenAPI document describes it.
#[derive(Clone)]
pub struct Route {
    /// HTTP method (`GET`, `POST`, `PUT`, `PATCH`, `DELETE`).
    pub method: &'static str,
    /// Path pattern as registered with actix-web (`{x}` is one path segment).
    pub pattern: &'static str,
    /// What the caller's role must grant.
    pub need: Permission,
    /// The action in words, for 403 messages ("token ci (reader) may not <action>").
    pub action: &'static str,
    /// The operation's one-line summary.
    pub summary: &'static str,
    /// Its query parameters.
    pub query: Option<fn() -> Vec<Parameter>>,
    /// Its JSON request body.
    pub body: Option<SchemaOf>,
    /// Its answers other than errors, in order.
    pub answers: Vec<Answer>,
    /// The error statuses it can answer besides those every route can (see `openapi`).
    pub errors: &'static [u16],
    /// The path parameters that are whole numbers (a server id); the others are strings.
    pub numbers: &'static [&'static str],
    register: Option<Register>,
}

impl fmt::Debug for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} ({:?})", self.method, self.pattern, self.need)
    }
}

impl Route {
    /// A route: `method pattern` needs `need`; `action` names it in a 403.
    pub fn new(
        method: &'static str,
        pattern: &'static str,
        need: Permission,
        action: &'static str,
    ) -> Self {
        Route {
            method,
            pattern,
            need,
            action,
            summary: "",
            query: None,
            body: None,
            answers: Vec::new(),
            errors: &[],
            numbers: &[],
            register: None,
        }
    }

    /// `GET pattern`.
    pub fn get(pattern: &'static str, need: Permission, action: &'static str) -> Self {
        Self::new("GET", pattern, need, action)
    }

    /// `POST pattern`.
    pub fn post(pattern: &'static str, need: Permission, action: &'static str) -> Self {
        Self::new("POST", pattern, need, action)
    }

    /// `PUT pattern`.
    pub fn put(pattern: &'static str, need: Permission, action: &'static str) -> Self {
        Self::new("PUT", pattern, need, action)
    }

    /// `PATCH pattern`.
    pub fn patch(pattern: &'static str, need: Permission, action: &'static str) -> Self {
        Self::new("PATCH", pattern, need, action)
    }

    /// `DELETE pattern`.
    pub fn delete(pattern: &'static str, need: Permission, action: &'static str) -> Self {
        Self::new("DELETE", pattern, need, action)
    }

    /// The handler.
    pub fn to<F, Args>(mut self, handler: F) -> Self
    where
        F: Handler<Args> + Send + Sync,
        Args: actix_web::FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.register = Some(Arc::new(move |route: actix_web::Route| {
            route.to(handler.clone())
        }));
        self
    }

    /// The operation's summary.
    pub fn summary(mut self, summary: &'static str) -> Self {
        self.summary = summary;
        self
    }

    /// Its query parameters, from the handler's query type.
    pub fn query<Q: IntoParams>(mut self) -> Self {
        self.query = Some(|| Q::into_params(|| Some(ParameterIn::Query)));
        self
    }

    /// Its JSON request body, of type `T`.
    pub fn body<T: ToSchema>(mut self) -> Self {
        self.body = Some(Spec::schema::<T>);
        self
    }

    /// A JSON answer of type `T`.
    pub fn json<T: ToSchema>(self, status: u16, what: &'static str) -> Self {
        self.answer(status, what, Content::Json(Spec::schema::<T>))
    }

    /// A JSON answer: an array of `T`.
    pub fn list<T: ToSchema>(self, status: u16, what: &'static str) -> Self {
        self.answer(status, what, Content::Json(Spec::list::<T>))
    }

    /// An answer that is not JSON: `content_type` text, or none.
    pub fn text(self, status: u16, what: &'static str, content_type: Option<&'static str>) -> Self {
        self.answer(status, what, Content::Text(content_type))
    }

    /// A stream of server-sent events: `events` names each event and the schema of its `data`.
    pub fn events(self, status: u16, what: &'static str, events: EventsOf) -> Self {
        self.answer(status, what, Content::Events(events))
    }

    /// An answer with `content`.
    pub fn answer(mut self, status: u16, what: &'static str, content: Content) -> Self {
        self.answers.push(Answer {
            status,
            what,
            content,
        });
        self
    }

    /// The error statuses of its own (400, 404, 409, ...); those every route can give are added.
    pub fn errors(mut self, errors: &'static [u16]) -> Self {
        self.errors = errors;
        self
    }

    /// Declares path parameters `names` whole numbers (the OpenAPI document says so; a non-number is 400).
    pub fn numbers(mut self, names: &'static [&'static str]) -> Self {
        self.numbers = names;
        self
    }

    /// Adds this route to the router (a route declared without a handler panics: a test calls every one).
    pub fn register(&self, cfg: &mut actix_web::web::ServiceConfig) {
        let register = self
            .register
            .as_ref()
            .unwrap_or_else(|| panic!("{self:?} has no handler"));
        let method = actix_web::http::Method::from_bytes(self.method.as_bytes())
            .unwrap_or_else(|_| panic!("{self:?}: no HTTP method {}", self.method));
        cfg.route(self.pattern, register(actix_web::web::method(method)));
    }

    /// Whether it has a handler.
    pub fn has_handler(&self) -> bool {
        self.register.is_some()
    }
}

#[cfg(test)]
#[path = "route_test.rs"]
mod tests;

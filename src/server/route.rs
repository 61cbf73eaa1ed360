//! The routes, declared once in [`ROUTES`]: each one's path, its label in `/metrics`, and how
//! the 404 answer lists it. [`route_of`] matches a request's path against the table,
//! [`Route::name`] reads the label from it, and [`not_found`] lists it.

/// The routes requests are answered and counted by (a fixed set, so label values stay bounded);
/// each one's path, label and 404 listing are declared in one table beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Route {
    /// Leaf's segment IDs for a tag.
    Segment,
    /// Leaf's snowflake IDs (the key is not used, as in Leaf).
    Snowflake,
    /// Leaf's decoding of a snowflake ID into its time, worker and sequence.
    Decode,
    /// Leaf's view of every tag's buffers.
    Cache,
    /// Leaf's view of the allocation table.
    Db,
    /// The Prometheus metrics.
    Metrics,
    /// Liveness: the process answers.
    Healthz,
    /// Readiness: every enabled mode can issue now.
    Readyz,
    /// The status page and its JSON.
    Status,
    /// Anything else (answered 404).
    Other,
}

/// How a route's path is matched.
#[derive(Debug, Clone, Copy)]
enum RoutePath {
    /// This path, and any path below it (`/api/segment/get` and `/api/segment/get/TAG`): what
    /// follows the slash is the key ([`Route::key`]).
    Under(&'static str),
    /// This path only.
    Exact(&'static str),
    /// No path: what no other route matched.
    Fallback,
}

/// One row of [`ROUTES`].
#[derive(Debug)]
struct RouteSpec {
    route: Route,
    path: RoutePath,
    /// The `route` label in `/metrics`.
    label: &'static str,
    /// How the 404 answer names it (`None`: not named).
    listed: Option<&'static str>,
}

/// Every route, in [`Route`]'s order, which is also the order paths are tried in: the ID routes
/// first, as nearly every request is for one of them.
const ROUTES: &[RouteSpec] = &[
    RouteSpec {
        route: Route::Segment,
        path: RoutePath::Under("/api/segment/get"),
        label: "segment",
        listed: Some("/api/segment/get/TAG"),
    },
    RouteSpec {
        route: Route::Snowflake,
        path: RoutePath::Under("/api/snowflake/get"),
        label: "snowflake",
        listed: Some("/api/snowflake/get/KEY"),
    },
    RouteSpec {
        route: Route::Decode,
        path: RoutePath::Exact("/decodeSnowflakeId"),
        label: "decode",
        listed: Some("/decodeSnowflakeId"),
    },
    RouteSpec {
        route: Route::Cache,
        path: RoutePath::Exact("/cache"),
        label: "cache",
        listed: Some("/cache"),
    },
    RouteSpec {
        route: Route::Db,
        path: RoutePath::Exact("/db"),
        label: "db",
        listed: Some("/db"),
    },
    RouteSpec {
        route: Route::Metrics,
        path: RoutePath::Exact("/metrics"),
        label: "metrics",
        listed: Some("/metrics"),
    },
    RouteSpec {
        route: Route::Healthz,
        path: RoutePath::Exact("/healthz"),
        label: "healthz",
        listed: Some("/healthz"),
    },
    RouteSpec {
        route: Route::Readyz,
        path: RoutePath::Exact("/readyz"),
        label: "readyz",
        listed: Some("/readyz"),
    },
    RouteSpec {
        route: Route::Status,
        path: RoutePath::Exact("/"),
        label: "status",
        listed: Some("/ (status)"),
    },
    RouteSpec {
        route: Route::Other,
        path: RoutePath::Fallback,
        label: "other",
        listed: None,
    },
];

// The table is indexed by `Route as usize`: checked when compiling.
const _: () = {
    let mut i = 0;
    while i < ROUTES.len() {
        assert!(
            ROUTES[i].route as usize == i,
            "ROUTES is not in Route's order"
        );
        i += 1;
    }
};

impl Route {
    /// How many routes there are (arrays of per-route counters are this long).
    pub(super) const COUNT: usize = ROUTES.len();

    /// Every route, in [`ROUTES`] order.
    pub(super) const ALL: [Route; Route::COUNT] = {
        let mut all = [Route::Other; Route::COUNT];
        let mut i = 0;
        while i < Route::COUNT {
            all[i] = ROUTES[i].route;
            i += 1;
        }
        all
    };

    /// Its place in [`ROUTES`] and in per-route arrays.
    pub(super) fn index(self) -> usize {
        self as usize
    }

    /// Its row of [`ROUTES`].
    fn spec(self) -> &'static RouteSpec {
        &ROUTES[self.index()]
    }

    /// The label value.
    pub fn name(self) -> &'static str {
        self.spec().label
    }

    /// How the 404 answer names it (`/api/segment/get/TAG`), if it does.
    pub(super) fn listed(self) -> Option<&'static str> {
        self.spec().listed
    }

    /// The raw key of a path this route matched: what follows its path and a slash (empty when
    /// nothing does, or for a route without keys).
    pub(super) fn key(self, path: &str) -> &str {
        match self.spec().path {
            RoutePath::Under(p) => path.get(p.len() + 1..).unwrap_or_default(),
            RoutePath::Exact(_) | RoutePath::Fallback => "",
        }
    }
}

impl RoutePath {
    /// Whether `path` is this route's.
    #[inline(always)]
    fn matches(self, path: &str) -> bool {
        match self {
            RoutePath::Under(p) => path
                .strip_prefix(p)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/')),
            RoutePath::Exact(p) => path == p,
            RoutePath::Fallback => false,
        }
    }
}

/// The route a path (without its trailing slash) asks for. Runs on every request: the paths are
/// tried in [`ROUTES`] order, the ID routes first. The table being constant, the loop compiles
/// to the comparisons one would write out by hand, each route a constant (no load from the
/// table); `scripts/bench instructions` measures it.
#[inline]
pub(super) fn route_of(path: &str) -> Route {
    for route in Route::ALL {
        if route.spec().path.matches(path) {
            return route;
        }
    }
    Route::Other
}

/// The message of the 404 answer to `path`: it names every route.
pub(super) fn not_found(path: &str) -> String {
    let routes: Vec<&str> = Route::ALL.iter().filter_map(|r| r.listed()).collect();
    format!(
        "no route {}; leafctl serves {}",
        crate::text::excerpt(path, 200),
        routes.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        assert_eq!(route_of("/api/segment/get/x"), Route::Segment);
        assert_eq!(route_of("/api/snowflake/get/x"), Route::Snowflake);
        assert_eq!(route_of("/api/segment/get"), Route::Segment);
        assert_eq!(route_of("/api/segment/getx"), Route::Other);
        assert_eq!(route_of("/api/segmentx"), Route::Other);
        assert_eq!(route_of("/cache"), Route::Cache);
        assert_eq!(route_of("/"), Route::Status);
        assert_eq!(route_of(""), Route::Other);
        for route in Route::ALL {
            if let RoutePath::Exact(p) | RoutePath::Under(p) = route.spec().path {
                assert_eq!(route_of(p), route, "{p}");
            }
        }
    }

    #[test]
    fn keys_follow_the_path_and_its_slash() {
        assert_eq!(Route::Segment.key("/api/segment/get/a%20b"), "a%20b");
        assert_eq!(Route::Segment.key("/api/segment/get/"), "");
        assert_eq!(Route::Segment.key("/api/segment/get"), "");
        assert_eq!(Route::Snowflake.key("/api/snowflake/get/k/x"), "k/x");
        assert_eq!(Route::Cache.key("/cache"), "");
    }

    #[test]
    fn labels_and_the_404_text_are_read_from_the_table() {
        let labels: Vec<&str> = Route::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(
            labels,
            [
                "segment",
                "snowflake",
                "decode",
                "cache",
                "db",
                "metrics",
                "healthz",
                "readyz",
                "status",
                "other"
            ]
        );
        assert_eq!(
            not_found("/nope"),
            "no route /nope; leafctl serves /api/segment/get/TAG, /api/snowflake/get/KEY, \
             /decodeSnowflakeId, /cache, /db, /metrics, /healthz, /readyz, / (status)"
        );
    }
}

//! Unknown names, with a did-you-mean where one is close.
#[kubebuilder::schema(validaton(minimum = 1))]
pub struct Typo(i32);

#[kubebuilder::schema]
pub struct Fields {
    #[kubebuilder(optinal)]
    pub a: Option<i32>,
    #[kubebuilder(validation(minimun = 0))]
    pub b: i32,
    #[kubebuilder(validation(items(max_lenght = 3)))]
    pub c: Vec<String>,
    #[kubebuilder(validation(x_validation(rule = "true", mesage = "m")))]
    pub d: i32,
    #[kubebuilder(external_docs(url = "https://x.io", descripton = "d"))]
    pub e: i32,
    #[kubebuilder(pruning(preserve_unknown))]
    pub f: serde_json::Value,
    #[kubebuilder(frobnicate)]
    pub g: i32,
    #[kubebuilder(validation(items(items(min_items = 1))))]
    pub h: Vec<Vec<String>>,
}

fn main() {}

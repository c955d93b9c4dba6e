//! Pieces of generated code that several attributes emit.

use std::borrow::Cow;

use kubebuilder_model::Text;
use kubebuilder_model::schema::{Docs, Literal, Rule, Value};
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

/// `Option<T>` as an expression of the generated code: `Some(value)` or `None`.
pub fn optional<T: ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

/// A value of the model as a constant expression of the generated code.
pub trait Constant {
    /// The expression.
    fn constant(&self) -> TokenStream;
}

macro_rules! constant_as_literal {
    ($($type:ty),*) => {
        $(impl Constant for $type {
            fn constant(&self) -> TokenStream {
                quote!(#self)
            }
        })*
    };
}

constant_as_literal!(bool, i64, f64);

/// A model string: `Cow::Borrowed("…")`.
impl Constant for Text {
    fn constant(&self) -> TokenStream {
        let value: &str = self;
        quote!(::std::borrow::Cow::Borrowed(#value))
    }
}

impl<T: Constant + Clone> Constant for Cow<'static, [T]> {
    fn constant(&self) -> TokenStream {
        let items = self.iter().map(Constant::constant);
        quote!(::std::borrow::Cow::Borrowed(&[#(#items),*]))
    }
}

impl<T: Constant> Constant for Option<T> {
    fn constant(&self) -> TokenStream {
        optional(self.as_ref().map(Constant::constant))
    }
}

impl<A: Constant, B: Constant> Constant for (A, B) {
    fn constant(&self) -> TokenStream {
        let (a, b) = (self.0.constant(), self.1.constant());
        quote!((#a, #b))
    }
}

impl Constant for Literal {
    fn constant(&self) -> TokenStream {
        let path = quote!(::kubebuilder::schema::Literal);
        match self {
            Literal::Null => quote!(#path::Null),
            Literal::Bool(b) => quote!(#path::Bool(#b)),
            Literal::Int(i) => quote!(#path::Int(#i)),
            Literal::Float(f) => quote!(#path::Float(#f)),
            Literal::String(s) => {
                let s = s.constant();
                quote!(#path::String(#s))
            }
            Literal::List(items) => {
                let items = items.constant();
                quote!(#path::List(#items))
            }
            Literal::Map(entries) => {
                let entries = entries.constant();
                quote!(#path::Map(#entries))
            }
        }
    }
}

impl Constant for Rule {
    fn constant(&self) -> TokenStream {
        let Rule {
            rule,
            message,
            message_expression,
            reason,
            field_path,
            optional_old_self,
        } = self;
        let (rule, message) = (rule.constant(), message.constant());
        let message_expression = message_expression.constant();
        let (reason, field_path) = (reason.constant(), field_path.constant());
        let optional_old_self = optional_old_self.constant();
        quote!(::kubebuilder::schema::Rule {
            rule: #rule,
            message: #message,
            message_expression: #message_expression,
            reason: #reason,
            field_path: #field_path,
            optional_old_self: #optional_old_self,
        })
    }
}

impl Constant for Docs {
    fn constant(&self) -> TokenStream {
        let (url, description) = (self.url.constant(), self.description.constant());
        quote!(::kubebuilder::schema::Docs { url: #url, description: #description })
    }
}

/// `marker_value`, from the value kinds' table: each value by its type's [`Constant`].
macro_rules! define_marker_value {
    ($( $(#[$doc:meta])* $kind:ident $(($type:ty))?, )*) => {
        /// A marker's value as the constant its `Marker` variant holds; `None` for a kind
        /// without a value (a flag).
        pub fn marker_value(value: &Value) -> Option<TokenStream> {
            match value {
                $( define_marker_value!(@pattern value $kind $(($type))?) => define_marker_value!(@constant value $kind $(($type))?), )*
            }
        }
    };
    (@pattern $value:ident $kind:ident) => { Value::$kind };
    (@pattern $value:ident $kind:ident($type:ty)) => { Value::$kind($value) };
    (@constant $value:ident $kind:ident) => { None };
    (@constant $value:ident $kind:ident($type:ty)) => { Some($value.constant()) };
}

kubebuilder_model::value_kinds!(define_marker_value);

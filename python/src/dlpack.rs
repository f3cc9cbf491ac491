//! The DLPack protocol (the unversioned `DLManagedTensor` in a capsule named
//! "dltensor", which CuPy, PyTorch and NumPy all read): gpumat arrays
//! exported without a copy, and CUDA tensors of other libraries wrapped
//! without one when they are column-major.

use std::ffi::{CStr, c_void};

use gpumat::{Device, Matrix};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;

const CPU: i32 = 1;
const CUDA: i32 = 2;
const FLOAT: u8 = 2;
const NAME: &CStr = c"dltensor";
const USED: &CStr = c"used_dltensor";

#[repr(C)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

/// `(device type, device id)` of a matrix on `device`.
pub fn device_of(device: &Device) -> (i32, i32) {
    if device.is_cpu() { (CPU, 0) } else { (CUDA, device.ordinal() as i32) }
}

/// What an exported tensor keeps alive: the Python array that owns the
/// matrix, and the shape and strides the tensor points to.
struct Export {
    _array: Py<PyAny>,
    shape: [i64; 2],
    strides: [i64; 2],
}

unsafe extern "C" fn delete_export(tensor: *mut DlManagedTensor) {
    // SAFETY: made by `export` from two boxes, deleted once by the protocol.
    unsafe {
        drop(Box::from_raw((*tensor).manager_ctx as *mut Export));
        drop(Box::from_raw(tensor));
    }
}

unsafe extern "C" fn capsule_destructor(capsule: *mut ffi::PyObject) {
    // SAFETY: a capsule not consumed still holds its tensor, which only we
    // delete then; a consumed one is renamed and its consumer deletes it.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, NAME.as_ptr()) == 1 {
            let tensor = ffi::PyCapsule_GetPointer(capsule, NAME.as_ptr()) as *mut DlManagedTensor;
            if let Some(delete) = (*tensor).deleter {
                delete(tensor);
            }
        }
    }
}

/// A capsule for `matrix`, owned by the Python object `array`. Pending work
/// on the matrix is waited for first, so that any consumer stream may read
/// it.
pub fn export(py: Python<'_>, array: Py<PyAny>, matrix: &Matrix<f64>) -> PyResult<Py<PyAny>> {
    let address = matrix.address().map_err(crate::raise)?;
    let device = matrix.device().clone();
    py.detach(|| device.synchronize()).map_err(crate::raise)?;
    let (rows, cols) = matrix.shape();
    let mut keep =
        Box::new(Export { _array: array, shape: [rows as i64, cols as i64], strides: [1, rows.max(1) as i64] });
    let (device_type, device_id) = device_of(&device);
    let tensor = Box::new(DlManagedTensor {
        dl_tensor: DlTensor {
            data: address as *mut c_void,
            device: DlDevice { device_type, device_id },
            ndim: 2,
            dtype: DlDataType { code: FLOAT, bits: 64, lanes: 1 },
            shape: keep.shape.as_mut_ptr(),
            strides: keep.strides.as_mut_ptr(),
            byte_offset: 0,
        },
        manager_ctx: Box::into_raw(keep) as *mut c_void,
        deleter: Some(delete_export),
    });
    let tensor = Box::into_raw(tensor);
    // SAFETY: a valid tensor and name; on failure the tensor is deleted.
    unsafe {
        let capsule = ffi::PyCapsule_New(tensor as *mut c_void, NAME.as_ptr(), Some(capsule_destructor));
        if capsule.is_null() {
            delete_export(tensor);
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, capsule).unbind())
    }
}

/// A consumed tensor: deleted (its producer told) when the wrapping matrix
/// is dropped.
struct Imported(*mut DlManagedTensor);

// SAFETY: DLPack deleters may be called from any thread.
unsafe impl Send for Imported {}
unsafe impl Sync for Imported {}

impl Drop for Imported {
    fn drop(&mut self) {
        // SAFETY: the tensor is ours since the capsule was renamed.
        unsafe {
            if let Some(delete) = (*self.0).deleter {
                delete(self.0);
            }
        }
    }
}

/// A CUDA tensor of another library on `device`: `x.__dlpack__` is asked
/// to order its producer's work before gpumat's queue. A float64 vector or
/// column-major matrix is wrapped without a copy; the transpose of one (a
/// C-ordered matrix, PyTorch's and CuPy's default) is wrapped and
/// transposed on the device, one copy. Anything else is refused.
pub fn import(py: Python<'_>, device: &Device, x: &Bound<'_, PyAny>) -> PyResult<Matrix<f64>> {
    let stream = device.stream_handle().ok_or_else(|| PyValueError::new_err("from_dlpack needs a CUDA device"))?;
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("stream", stream)?;
    let capsule = x.call_method("__dlpack__", (), Some(&kwargs))?;
    // SAFETY: a capsule by the protocol's name holds a DLManagedTensor.
    let tensor = unsafe { ffi::PyCapsule_GetPointer(capsule.as_ptr(), NAME.as_ptr()) } as *mut DlManagedTensor;
    if tensor.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: renaming marks it consumed; from here `Imported` deletes it.
    if unsafe { ffi::PyCapsule_SetName(capsule.as_ptr(), USED.as_ptr()) } != 0 {
        return Err(PyErr::fetch(py));
    }
    let owner = Imported(tensor);
    // SAFETY: the producer keeps the tensor valid until deleted.
    let t = unsafe { &(*tensor).dl_tensor };
    if t.device.device_type != CUDA || t.device.device_id as usize != device.ordinal() {
        return Err(PyValueError::new_err(format!(
            "the tensor is on DLPack device ({}, {}), gpumat on CUDA GPU {}",
            t.device.device_type,
            t.device.device_id,
            device.ordinal()
        )));
    }
    if (t.dtype.code, t.dtype.bits, t.dtype.lanes) != (FLOAT, 64, 1) {
        return Err(PyTypeError::new_err(format!(
            "expected float64, got DLPack type code {} of {} bits × {} lanes",
            t.dtype.code, t.dtype.bits, t.dtype.lanes
        )));
    }
    // SAFETY: `ndim` entries each, as the protocol says; strides may be null
    // (C order).
    let shape: Vec<i64> = unsafe { (0..t.ndim as usize).map(|k| *t.shape.add(k)).collect() };
    let strides: Option<Vec<i64>> =
        (!t.strides.is_null()).then(|| unsafe { (0..t.ndim as usize).map(|k| *t.strides.add(k)).collect() });
    let address = t.data as u64 + t.byte_offset;
    let (rows, cols, transposed) = match (&shape[..], strides.as_deref()) {
        ([n], None) => (*n, 1, false),
        ([n], Some([1])) => (*n, 1, false),
        ([m, n], Some([1, ld])) if *ld == (*m).max(1) => (*m, *n, false),
        ([m, n], None) => (*m, *n, true),
        ([m, n], Some([ld, 1])) if *ld == (*n).max(1) => (*m, *n, true),
        ([_] | [_, _], _) => {
            return Err(PyBufferError::new_err(
                "a strided tensor: make it contiguous (column-major to share it without a copy)",
            ));
        }
        _ => return Err(PyValueError::new_err(format!("expected 1 or 2 dimensions, got {}", shape.len()))),
    };
    let (rows, cols) = (rows as usize, cols as usize);
    // SAFETY: checked above: float64, contiguous, on this GPU; the stream
    // argument ordered the producer's work.
    let wrapped = if transposed {
        unsafe { device.wrap_device_memory::<f64>(address, cols, rows, Box::new(owner)) }
    } else {
        unsafe { device.wrap_device_memory::<f64>(address, rows, cols, Box::new(owner)) }
    }
    .map_err(crate::raise)?;
    if !transposed {
        return Ok(wrapped);
    }
    // The copy is done before the producer's memory is let go.
    py.detach(|| {
        let a = wrapped.transpose()?;
        device.synchronize()?;
        Ok(a)
    })
    .map_err(crate::raise)
}

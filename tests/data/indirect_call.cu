// Calls through function pointers, as nvcc compiles them: a table of device functions indexed by
// the thread (divergent targets within a warp), a pointer chosen with a conditional, and virtual
// functions of objects built on the device. tests/test_ptx_isa.cpp (IndirectCall.*) checks the
// results against the same formulas written in C++. Regenerate the PTX with stimuli/regen_ptx.sh.
typedef int (*op_t)(int, int);

__device__ __noinline__ int twice(int v) { return 2 * v; }
__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }
__device__ __noinline__ int op_sub(int a, int b) { return twice(a) - b; }  // nested direct call
__device__ __noinline__ int op_max(int a, int b) { return a > b ? a : b; }

__device__ op_t table[4] = {op_add, op_mul, op_sub, op_max};

struct Shape {
  int side;
  __device__ explicit Shape(int s) : side(s) {}
  virtual __device__ int area() const = 0;
  virtual __device__ int corners() const = 0;
};
struct Square : Shape {
  __device__ explicit Square(int s) : Shape(s) {}
  __device__ int area() const override { return side * side; }
  __device__ int corners() const override { return 4; }
};
struct Triangle : Shape {
  __device__ explicit Triangle(int s) : Shape(s) {}
  __device__ int area() const override { return side * side / 2; }
  __device__ int corners() const override { return 3; }
};

// out[i] = table[sel[i] % 4](a[i], b[i])
extern "C" __global__ void apply(const int* sel, const int* a, const int* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  op_t f = table[sel[i] & 3];
  out[i] = f(a[i], b[i]);
}

// out[i] = (a[i] < b[i] ? op_add : op_mul)(a[i], b[i]) + 1
extern "C" __global__ void choose(const int* a, const int* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  volatile op_t f = a[i] < b[i] ? op_add : op_mul;
  out[i] = f(a[i], b[i]) + 1;
}

// out[i] = area * 10 + corners of a square (odd i) or a triangle (even i) of side i
extern "C" __global__ void shapes(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Square sq(i);
  Triangle tr(i);
  const Shape* s = (i & 1) ? static_cast<const Shape*>(&sq) : static_cast<const Shape*>(&tr);
  out[i] = s->area() * 10 + s->corners();
}
